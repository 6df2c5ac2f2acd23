package export_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/export"
)

// langGraphStep is one line of testdata/langgraph/thread.jsonl: a step as
// cairn's LangGraph.js checkpointer (clients/langgraph) wrote it, taken
// from a real graph run (an agent node calling a tool node, two turns on
// one thread, then a third turn from the checkpoint after the first answer,
// which LangGraph's time travel makes a fork).
type langGraphStep struct {
	Session string          `json:"session"`
	Step    uint64          `json:"step"`
	Parent  string          `json:"parent"`
	Record  json.RawMessage `json:"record"`
	State   json.RawMessage `json:"state"`
}

func readAdapterSteps(t *testing.T, file string) []langGraphStep {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var steps []langGraphStep
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		var s langGraphStep
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, s)
	}
	return steps
}

// langGraphWorkspace commits the fixture's steps, forking where a
// session's first step names a parent in another session. edit, if not
// nil, may change a step's state before it is committed.
func langGraphWorkspace(t *testing.T, edit func(*langGraphStep)) *cairn.Workspace {
	return adapterWorkspace(t, "testdata/langgraph/thread.jsonl", edit)
}

// adapterWorkspace commits the steps of an adapter's fixture file.
func adapterWorkspace(t *testing.T, file string, edit func(*langGraphStep)) *cairn.Workspace {
	t.Helper()
	ctx := context.Background()
	ws, err := cairn.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	for _, st := range readAdapterSteps(t, file) {
		if edit != nil {
			edit(&st)
		}
		s, err := ws.Session(st.Session)
		if err != nil {
			t.Fatal(err)
		}
		if from := st.Parent; from != "" && !strings.HasPrefix(from, st.Session+"@") {
			name, n, _ := strings.Cut(from, "@")
			num, _ := strconv.ParseUint(n, 10, 64)
			parent, err := ws.ReadStep(ctx, name, num)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ws.Fork(ctx, parent, st.Session); err != nil {
				t.Fatal(err)
			}
			if s, err = ws.Session(st.Session); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Commit(ctx, cairn.JSON(st.State), cairn.CommitOptions{Record: st.Record})
		if err != nil {
			t.Fatal(err)
		}
		if got.Number != st.Step {
			t.Fatalf("committed %s, want step %d", got, st.Step)
		}
	}
	return ws
}

// A LangGraph thread exports as the conversation LangGraph holds, read
// from the checkpoints' message channel: roles, texts, tool calls and
// their results, and the model and token counts of the assistant
// messages; its time-travel fork as its own conversation sharing the
// thread's first turn.
func TestLangGraphSessionsExportTheirConversation(t *testing.T) {
	ws := langGraphWorkspace(t, nil)
	out, sum, _ := run(t, ws, export.Options{Format: export.OpenAIJSONL})
	docs := lines(t, out)
	if len(docs) != 2 || len(sum.Skipped) != 0 {
		t.Fatalf("%d trajectories, summary %+v, want 2 and none skipped:\n%s", len(docs), sum, out)
	}
	want := map[string]string{
		"lg.dDE..0":                 "system:be brief|user:what is in a.txt?|assistant:[call-1 read {\"path\":\"a.txt\"}]|tool call-1 read:hello|assistant:it says hello|user:and again?|assistant:[call-3 read {\"path\":\"a.txt\"}]|tool call-3 read:hello|assistant:it says hello",
		"lg.dDE..b020f65a5d8221816": "system:be brief|user:what is in a.txt?|assistant:[call-1 read {\"path\":\"a.txt\"}]|tool call-1 read:hello|assistant:it says hello|user:fork question|assistant:[call-5 read {\"path\":\"a.txt\"}]|tool call-5 read:hello|assistant:it says hello",
	}
	for _, d := range docs {
		meta := d["metadata"].(map[string]any)
		var got []string
		for _, m := range d["messages"].([]any) {
			m := m.(map[string]any)
			s := m["role"].(string)
			if id, ok := m["tool_call_id"].(string); ok {
				s += " " + id + " " + m["name"].(string)
			}
			if calls, ok := m["tool_calls"].([]any); ok {
				for _, c := range calls {
					c := c.(map[string]any)
					fn := c["function"].(map[string]any)
					s += ":[" + c["id"].(string) + " " + fn["name"].(string) + " " + fn["arguments"].(string) + "]"
				}
			} else {
				s += ":" + m["content"].(string)
			}
			got = append(got, s)
		}
		session := meta["session"].(string)
		if g := strings.Join(got, "|"); g != want[session] {
			t.Errorf("%s:\n got %s\nwant %s", session, g, want[session])
		}
		if meta["model"] != "gpt-x" {
			t.Errorf("%s: model %v, want gpt-x", session, meta["model"])
		}
	}

	// ATIF carries each model call's tokens on its agent step.
	out, _, _ = run(t, ws, export.Options{Format: export.ATIF, Sessions: []string{"lg.dDE..0"}})
	docs = lines(t, out)
	var tokens []string
	for _, st := range docs[0]["steps"].([]any) {
		st := st.(map[string]any)
		if m, ok := st["metrics"].(map[string]any); ok {
			tokens = append(tokens, jsonNum(m["prompt_tokens"])+"/"+jsonNum(m["completion_tokens"]))
		}
	}
	if g, w := strings.Join(tokens, " "), "100/7 120/4 100/7 120/4"; g != w {
		t.Errorf("ATIF token counts %s, want %s", g, w)
	}
}

// A checkpoint that rewrote the conversation before it (LangGraph's
// RemoveMessage, a summarising node) leaves steps that are not one
// conversation: the chat formats skip the thread and say why, rather than
// export a conversation the model never saw.
func TestLangGraphRewrittenConversationSkipped(t *testing.T) {
	ws := langGraphWorkspace(t, func(st *langGraphStep) {
		if st.Session != "lg.dDE..0" || st.Step != 16 {
			return
		}
		var state map[string]any
		if err := json.Unmarshal(st.State, &state); err != nil {
			t.Fatal(err)
		}
		v := state["channels"].(map[string]any)["messages"].(map[string]any)["value"].(map[string]any)
		msgs := v["json"].([]any)
		v["json"] = msgs[1:] // the system message removed
		st.State, _ = json.Marshal(state)
	})
	out, sum, _ := run(t, ws, export.Options{Format: export.OpenAIJSONL, Sessions: []string{"lg.dDE..0"}})
	if strings.TrimSpace(out) != "" || len(sum.Skipped) != 1 {
		t.Fatalf("exported %q, summary %+v; want the thread skipped", out, sum)
	}
	var why string
	for _, n := range sum.Skipped {
		why += n.Reason + ": " + n.Example + "\n"
	}
	if !strings.Contains(why, "whose conversation cannot be read from their state") || !strings.Contains(why, "removed or changed messages") || !strings.Contains(why, "lg.dDE..0@16") {
		t.Errorf("skip reasons do not name the rewriting checkpoint's step:\n%s", why)
	}
}

// An ADK session exports as its events' conversation: the user's text,
// the model's text with its function call, the function response as a
// tool message, the model's answer, with the model and token counts
// (testdata/adk/session.jsonl: the service's steps for those events).
func TestADKSessionsExportTheirConversation(t *testing.T) {
	ws := adapterWorkspace(t, "testdata/adk/session.jsonl", nil)
	out, sum, _ := run(t, ws, export.Options{Format: export.OpenAIJSONL})
	docs := lines(t, out)
	if len(docs) != 1 || len(sum.Skipped) != 0 {
		t.Fatalf("%d trajectories, summary %+v, want 1 and none skipped:\n%s", len(docs), sum, out)
	}
	got, _ := json.Marshal(docs[0]["messages"])
	want := `[{"content":"what is in a.txt?","role":"user"},` +
		`{"content":"let me look","role":"assistant","tool_calls":[{"function":{"arguments":"{\"path\":\"a.txt\"}","name":"read"},"id":"fc-1","type":"function"}]},` +
		`{"content":"{\"text\":\"hello\"}","name":"read","role":"tool","tool_call_id":"fc-1"},` +
		`{"content":"it says hello","role":"assistant"}]`
	if string(got) != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
	if m := docs[0]["metadata"].(map[string]any)["model"]; m != "gemini-x" {
		t.Errorf("model %v, want gemini-x", m)
	}
	out, _, _ = run(t, ws, export.Options{Format: export.ATIF})
	var tokens []string
	for _, st := range lines(t, out)[0]["steps"].([]any) {
		if m, ok := st.(map[string]any)["metrics"].(map[string]any); ok {
			tokens = append(tokens, jsonNum(m["prompt_tokens"])+"/"+jsonNum(m["completion_tokens"])+"/"+jsonNum(m["cached_tokens"]))
		}
	}
	if g, w := strings.Join(tokens, " "), "100/7/40 100/7/40"; g != w {
		t.Errorf("ATIF token counts %s, want %s", g, w)
	}
}

// A judgement committed on an adapter's session (a step whose record
// follows the convention with an outcome and no messages, as a person or
// a judge adds one) keeps the session's conversation read from its state,
// and selects it.
func TestJudgedLangGraphThreadKeepsItsConversation(t *testing.T) {
	ctx := context.Background()
	ws := langGraphWorkspace(t, nil)
	s, err := ws.Session("lg.dDE..0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(ctx, cairn.Patch([]byte(`[]`)), rec(t, cairn.Record{Outcome: "success"})); err != nil {
		t.Fatal(err)
	}
	out, sum, _ := run(t, ws, export.Options{Format: export.OpenAIJSONL, Outcome: "success"})
	docs := lines(t, out)
	if len(docs) != 1 || len(sum.Skipped) != 0 {
		t.Fatalf("%d trajectories, summary %+v, want the judged thread:\n%s", len(docs), sum, out)
	}
	if n := len(docs[0]["messages"].([]any)); n != 9 {
		t.Errorf("%d messages, want the thread's 9", n)
	}
}
