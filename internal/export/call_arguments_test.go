package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/export"
)

// argumentForms are the ways a tool call may give its arguments, as the
// key and value of a JSON object member ("" for none).
var argumentForms = []struct{ name, member string }{
	{"missing", ``},
	{"null", `:null`},
	{"object", `:{"path":"a.txt"}`},
	{"string", `:"{\"path\": \"a.txt\"}"`},
}

// argumentSessions commits, for each source of a conversation (records
// of the convention, a LangGraph.js thread, an ADK session), one session
// holding one call of each argument form, each answered, then an answer.
func argumentSessions(t *testing.T, ws *cairn.Workspace) []string {
	t.Helper()
	ctx := context.Background()
	commit := func(name, state, record string) {
		s, err := ws.Session(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Commit(ctx, cairn.JSON([]byte(state)), cairn.CommitOptions{Record: json.RawMessage(record)}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	member := func(key, m string) string {
		if m == "" {
			return ""
		}
		return `,"` + key + `"` + m
	}
	var recCalls, recResults, lgCalls, lgResults, adkCalls, adkResults []string
	for i, f := range argumentForms {
		id := fmt.Sprint("c", i)
		recCalls = append(recCalls, fmt.Sprintf(`{"id":%q,"name":"read"%s}`, id, member("arguments", f.member)))
		recResults = append(recResults, fmt.Sprintf(`{"role":"tool","tool_call_id":%q,"content":"r"}`, id))
		lgCalls = append(lgCalls, fmt.Sprintf(`{"id":%q,"name":"read"%s}`, id, member("args", f.member)))
		lgResults = append(lgResults, fmt.Sprintf(`{"lc":1,"type":"constructor","id":["langchain_core","messages","ToolMessage"],"kwargs":{"content":"r","tool_call_id":%q}}`, id))
		adkCalls = append(adkCalls, fmt.Sprintf(`{"functionCall":{"id":%q,"name":"read"%s}}`, id, member("args", f.member)))
		adkResults = append(adkResults, fmt.Sprintf(`{"functionResponse":{"id":%q,"name":"read","response":{"r":1}}}`, id))
	}
	join := func(xs []string) string { return strings.Join(xs, ",") }
	commit("from-records", `{}`, `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[`+join(recCalls)+`]},`+join(recResults)+`,{"role":"assistant","content":"done"}]}`)
	commit("from-langgraph", `{"channels":{"messages":{"value":{"json":[`+
		`{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{"content":"q"}},`+
		`{"lc":1,"type":"constructor","id":["langchain_core","messages","AIMessage"],"kwargs":{"content":"","tool_calls":[`+join(lgCalls)+`]}},`+
		join(lgResults)+`,{"lc":1,"type":"constructor","id":["langchain_core","messages","AIMessage"],"kwargs":{"content":"done"}}]}}}}`,
		`{"langgraph":"checkpoint","checkpoint_id":"1"}`)
	commit("from-adk", `{"adk_session":1,"events":[`+
		`{"Content":{"role":"user","parts":[{"text":"q"}]}},`+
		`{"Content":{"role":"model","parts":[`+join(adkCalls)+`]}},`+
		`{"Content":{"role":"user","parts":[`+join(adkResults)+`]}},`+
		`{"Content":{"role":"model","parts":[{"text":"done"}]}}]}`,
		`{"adk":"event","event":"e1"}`)
	return []string{"from-records", "from-langgraph", "from-adk"}
}

// A tool call's arguments given missing, null, as an object or as a
// string come out the same in every format whichever source the
// conversation was read from: records, a LangGraph thread's state or an
// ADK session's. The default for missing and null arguments was decided
// by each reader on its own (a LangGraph call's null arguments reached
// Parquet as null, an ADK call's as {}, a record's missing ones as null).
func TestToolCallArgumentsSameFromEverySource(t *testing.T) {
	ws := emptyStore(t)
	sources := argumentSessions(t, ws)
	// got[format][session] lists each call's arguments as the format
	// wrote them, as JSON text.
	got := map[string]map[string][]string{}
	add := func(format, session string, v any) {
		if got[format] == nil {
			got[format] = map[string][]string{}
		}
		b, _ := json.Marshal(v)
		got[format][session] = append(got[format][session], string(b))
	}
	for _, f := range []string{export.OpenAIJSONL, export.ShareGPT, export.ATIF} {
		out, sum, _ := run(t, ws, export.Options{Format: f})
		if len(sum.Skipped) > 0 || len(sum.LeftOut) > 0 {
			t.Fatalf("%s: skipped %+v, left out %+v", f, sum.Skipped, sum.LeftOut)
		}
		for _, o := range lines(t, out) {
			switch f {
			case export.OpenAIJSONL:
				for _, m := range asList(o["messages"]) {
					for _, tc := range asList(m.(map[string]any)["tool_calls"]) {
						add(f, o["metadata"].(map[string]any)["session"].(string), tc.(map[string]any)["function"].(map[string]any)["arguments"])
					}
				}
			case export.ShareGPT:
				for _, turn := range asList(o["conversations"]) {
					if turn := turn.(map[string]any); turn["from"] == "function_call" {
						var calls []map[string]any
						if err := json.Unmarshal([]byte(turn["value"].(string)), &calls); err != nil {
							t.Fatal(err)
						}
						for _, c := range calls {
							add(f, o["id"].(string), c["arguments"])
						}
					}
				}
			case export.ATIF:
				for _, s := range asList(o["steps"]) {
					for _, tc := range asList(s.(map[string]any)["tool_calls"]) {
						add(f, o["session_id"].(string), tc.(map[string]any)["arguments"])
					}
				}
			}
		}
	}
	out, _, _ := run(t, ws, export.Options{Format: export.Parquet})
	rows, err := parquet.Read[struct {
		Trajectory string  `parquet:"trajectory"`
		ToolCalls  *string `parquet:"tool_calls,optional"`
		Messages   *string `parquet:"messages,optional"`
	}](bytes.NewReader([]byte(out)), int64(len(out)))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		var calls, msgCalls []struct{ Arguments any }
		var msgs []struct {
			ToolCalls []struct{ Arguments any } `json:"tool_calls"`
		}
		if r.ToolCalls == nil || r.Messages == nil || json.Unmarshal([]byte(*r.ToolCalls), &calls) != nil || json.Unmarshal([]byte(*r.Messages), &msgs) != nil {
			t.Fatalf("parquet row of %s: tool_calls %v", r.Trajectory, r.ToolCalls)
		}
		for _, m := range msgs {
			msgCalls = append(msgCalls, m.ToolCalls...)
		}
		for i, c := range calls {
			add("parquet tool_calls", r.Trajectory, c.Arguments)
			add("parquet messages", r.Trajectory, msgCalls[i].Arguments)
		}
	}
	for format, bySession := range got {
		want := bySession[sources[0]]
		if len(want) != len(argumentForms) {
			t.Errorf("%s: %s: %d calls, want %d", format, sources[0], len(want), len(argumentForms))
		}
		for _, s := range sources[1:] {
			if !reflect.DeepEqual(bySession[s], want) {
				t.Errorf("%s: arguments (missing, null, object, string) of %s %v, of %s %v", format, s, bySession[s], sources[0], want)
			}
		}
	}
	// What each form is written as (docs/export.md#tool-call-arguments).
	for format, want := range map[string][]string{
		export.OpenAIJSONL: {`"{}"`, `"{}"`, `"{\"path\":\"a.txt\"}"`, `"{\"path\": \"a.txt\"}"`},
		export.ShareGPT:    {`{}`, `{}`, `{"path":"a.txt"}`, `{"path":"a.txt"}`},
		export.ATIF:        {`{}`, `{}`, `{"path":"a.txt"}`, `{"path":"a.txt"}`},
		"parquet messages": {`{}`, `{}`, `{"path":"a.txt"}`, `"{\"path\": \"a.txt\"}"`},
	} {
		if g := got[format][sources[0]]; !reflect.DeepEqual(g, want) {
			t.Errorf("%s: arguments %v, want %v", format, g, want)
		}
	}
}

// Arguments that are neither an object nor a string, which a record of
// the convention may not hold, were written as {} when an adapter's
// state held them (a LangGraph call's "args": 5), without a word: the
// trajectory's conversation cannot be read, so the chat formats skip it
// and say where.
func TestAdapterToolCallArgumentsOfAnotherKind(t *testing.T) {
	ws := emptyStore(t)
	s, _ := ws.Session("odd-args")
	state := `{"channels":{"messages":{"value":{"json":[{"type":"human","content":"q"},{"type":"ai","content":"","tool_calls":[{"id":"c","name":"read","args":5}]},{"type":"tool","content":"r","tool_call_id":"c"},{"type":"ai","content":"done"}]}}}}`
	if _, err := s.Commit(context.Background(), cairn.JSON([]byte(state)), cairn.CommitOptions{Record: json.RawMessage(`{"langgraph":"checkpoint","checkpoint_id":"k1"}`)}); err != nil {
		t.Fatal(err)
	}
	out, sum, _ := run(t, ws, export.Options{Format: export.OpenAIJSONL})
	n := noted(sum.Skipped, "framework adapter", "odd-args")
	if out != "" || n == nil || !strings.Contains(n.Example, "checkpoint k1") || !strings.Contains(n.Example, "arguments is a number") {
		t.Fatalf("wrote %q, skipped %+v; want odd-args skipped, its arguments named", out, sum.Skipped)
	}
}
