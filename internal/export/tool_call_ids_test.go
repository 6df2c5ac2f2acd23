package export_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/export"
)

// Agents that do not number their tool calls are common. Export wrote
// such a call as "id":"" (OpenAI's format refuses it, and two calls of
// one empty id cannot be told apart) and its result with an empty
// tool_call_id. Now a call without an id gets call_<step>_<n> (its
// step's number, its place among the step's calls), and a result
// without one the id of the call it answers: the first unanswered call
// of the assistant message before it (of its name, if it names its
// tool); a result no call is left for is noted, not paired.
func TestToolCallsWithoutIDs(t *testing.T) {
	ws := emptyStore(t)
	// Two parallel calls answered in order, then a call answered in the
	// next step by a result that names its tool.
	commitRecords(t, ws, "plain",
		`{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"","tool_calls":[{"name":"ls","arguments":{"x":"a"}},{"id":"","name":"cat","arguments":{"x":"b"}}]},{"role":"tool","content":"a"},{"role":"tool","tool_call_id":"","content":"b"}]}`,
		`{"messages":[{"role":"assistant","content":"","tool_calls":[{"name":"ls","arguments":{"x":"c"}}]}]}`,
		`{"messages":[{"role":"tool","name":"ls","content":"c"},{"role":"assistant","content":"done"}]}`)
	// Results that name their tools, out of the calls' order.
	commitRecords(t, ws, "named",
		`{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"","tool_calls":[{"name":"ls","arguments":{"x":"a"}},{"name":"cat","arguments":{"x":"b"}}]},{"role":"tool","name":"cat","content":"b"},{"role":"tool","name":"ls","content":"a"},{"role":"assistant","content":"done"}]}`)
	// A numbered call beside one without an id; its result comes second.
	commitRecords(t, ws, "mixed",
		`{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"ls","arguments":{"x":"a"}},{"name":"ls","arguments":{"x":"b"}}]},{"role":"tool","content":"b"},{"role":"tool","tool_call_id":"c1","content":"a"},{"role":"assistant","content":"done"}]}`)
	// One result more than calls: it cannot be paired.
	commitRecords(t, ws, "stray",
		`{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"","tool_calls":[{"name":"ls","arguments":{"x":"a"}}]},{"role":"tool","content":"a"},{"role":"tool","content":"extra"},{"role":"assistant","content":"done"}]}`)
	paired := []string{"mixed", "named", "plain"}

	// checkPairs checks that the calls of msgs have ids of their own, and
	// that each result's id is the id of the call it answers.
	checkPairs := func(format, name string, msgs []any, call func(map[string]any) (id, x string)) {
		t.Helper()
		arg := map[string]string{}
		for _, m := range msgs {
			m := m.(map[string]any)
			for _, c := range asList(m["tool_calls"]) {
				id, x := call(c.(map[string]any))
				if id == "" {
					t.Errorf("%s %s: a tool call without an id: %v", format, name, c)
				}
				if _, dup := arg[id]; dup {
					t.Errorf("%s %s: tool call id %q used twice", format, name, id)
				}
				arg[id] = x
			}
			if m["role"] == "tool" {
				id, _ := m["tool_call_id"].(string)
				if x, ok := arg[id]; !ok || x != m["content"] {
					t.Errorf("%s %s: result %q has tool_call_id %q, the call answered by %q", format, name, m["content"], id, x)
				}
			}
		}
	}

	out, sum, _ := run(t, ws, export.Options{Format: export.OpenAIJSONL})
	again, _, _ := run(t, ws, export.Options{Format: export.OpenAIJSONL})
	if out != again {
		t.Errorf("two exports of one store differ:\n%s\n%s", out, again)
	}
	got := map[string]bool{}
	for _, l := range lines(t, out) {
		name := l["metadata"].(map[string]any)["session"].(string)
		got[name] = true
		msgs := asList(l["messages"])
		if err := export.OpenAIChatError(msgs); err != nil {
			t.Errorf("openai-jsonl %s: %v", name, err)
		}
		checkPairs("openai-jsonl", name, msgs, func(c map[string]any) (string, string) {
			var args map[string]string
			_ = json.Unmarshal([]byte(c["function"].(map[string]any)["arguments"].(string)), &args)
			id, _ := c["id"].(string)
			return id, args["x"]
		})
		if name == "plain" {
			var ids []string
			for _, m := range msgs {
				for _, c := range asList(m.(map[string]any)["tool_calls"]) {
					ids = append(ids, c.(map[string]any)["id"].(string))
				}
			}
			if strings.Join(ids, " ") != "call_1_1 call_1_2 call_2_1" {
				t.Errorf("plain: call ids %v, want call_1_1 call_1_2 call_2_1", ids)
			}
		}
	}
	for _, name := range paired {
		if !got[name] {
			t.Errorf("openai-jsonl: %s not written (skipped: %+v)", name, sum.Skipped)
		}
	}
	if got["stray"] || noted(sum.Skipped, "tool result", "stray") == nil {
		t.Errorf("openai-jsonl: stray written, or not named: skipped %+v", sum.Skipped)
	}

	// ATIF: each result is the observation of the call it answers.
	out, sum, _ = run(t, ws, export.Options{Format: export.ATIF})
	for _, d := range lines(t, out) {
		name := d["session_id"].(string)
		if err := harborATIFError(d); err != nil {
			t.Errorf("atif %s: %v", name, err)
		}
		arg := map[string]string{}
		results := 0
		for _, s := range asList(d["steps"]) {
			s := s.(map[string]any)
			for _, tc := range asList(s["tool_calls"]) {
				tc := tc.(map[string]any)
				id := tc["tool_call_id"].(string)
				if id == "" {
					t.Errorf("atif %s: a tool call without an id", name)
				}
				arg[id] = tc["arguments"].(map[string]any)["x"].(string)
			}
			obs, _ := s["observation"].(map[string]any)
			for _, r := range asList(obs["results"]) {
				r := r.(map[string]any)
				id, _ := r["source_call_id"].(string)
				if name == "stray" && r["content"] == "extra" {
					continue
				}
				results++
				if arg[id] != r["content"] {
					t.Errorf("atif %s: result %q given to call %q, which %q answers", name, r["content"], id, arg[id])
				}
			}
		}
		if results != len(arg) {
			t.Errorf("atif %s: %d results paired for %d calls", name, results, len(arg))
		}
	}
	if noted(sum.LeftOut, "without a tool_call_id", "stray") == nil {
		t.Errorf("atif: the unpaired result of stray not noted: %+v", sum.LeftOut)
	}

	// Parquet: the messages column carries the ids.
	file := filepath.Join(t.TempDir(), "steps.parquet")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := export.Export(t.Context(), ws, f, export.Options{Format: export.Parquet, Sessions: paired}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	rows, _, _ := readParquet(t, file)
	msgs := map[string][]any{}
	for _, r := range rows {
		var m []any
		if s, ok := r["messages"].(string); ok {
			if err := json.Unmarshal([]byte(s), &m); err != nil {
				t.Fatal(err)
			}
		}
		name := r["trajectory"].(string)
		msgs[name] = append(msgs[name], m...)
	}
	for _, name := range paired {
		checkPairs("parquet", name, msgs[name], func(c map[string]any) (string, string) {
			id, _ := c["id"].(string)
			x, _ := c["arguments"].(map[string]any)["x"].(string)
			return id, x
		})
	}
}
