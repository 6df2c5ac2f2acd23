package export_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/export"
)

// TestLongAdapterSessionsSameFile: an adapter's session too long to
// hold was read whole all the same (its conversation is in its states);
// it is now read a run of steps at a time, its messages handed out as
// the newest state is written out. Every format must write what holding
// it whole writes: LangGraph's thread and its time-travel fork (judged,
// so they pair), a thread that rewrote its conversation, one whose
// message does not convert, and ADK's session, plain and with an event
// of no chat role.
func TestLongAdapterSessionsSameFile(t *testing.T) {
	ctx := context.Background()
	judge := func(ws *cairn.Workspace, name, outcome string) {
		s, err := ws.Session(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Commit(ctx, cairn.Patch([]byte(`[]`)), rec(t, cairn.Record{Outcome: outcome})); err != nil {
			t.Fatal(err)
		}
	}
	editJSON := func(st *langGraphStep, fn func(state map[string]any)) {
		var state map[string]any
		if err := json.Unmarshal(st.State, &state); err != nil {
			t.Fatal(err)
		}
		fn(state)
		st.State, _ = json.Marshal(state)
	}
	lgMessages := func(state map[string]any) []any {
		ch, _ := state["channels"].(map[string]any)
		m, _ := ch["messages"].(map[string]any)
		v, _ := m["value"].(map[string]any)
		l, _ := v["json"].([]any)
		return l
	}
	cases := map[string]func(t *testing.T) *cairn.Workspace{
		"langgraph": func(t *testing.T) *cairn.Workspace {
			ws := langGraphWorkspace(t, nil)
			judge(ws, "lg.dDE..0", "failure")
			judge(ws, "lg.dDE..b020f65a5d8221816", "success")
			return ws
		},
		"langgraph rewritten": func(t *testing.T) *cairn.Workspace {
			return langGraphWorkspace(t, func(st *langGraphStep) {
				if st.Session == "lg.dDE..0" && st.Step == 16 {
					editJSON(st, func(state map[string]any) {
						v := state["channels"].(map[string]any)["messages"].(map[string]any)["value"].(map[string]any)
						v["json"] = v["json"].([]any)[1:]
					})
				}
			})
		},
		"langgraph unconverted": func(t *testing.T) *cairn.Workspace {
			return langGraphWorkspace(t, func(st *langGraphStep) {
				editJSON(st, func(state map[string]any) {
					if l := lgMessages(state); len(l) > 5 {
						l[5] = map[string]any{"lc": 1, "type": "constructor", "id": []any{"x", "FooMessage"}, "kwargs": map[string]any{}}
					}
				})
			})
		},
		"adk": func(t *testing.T) *cairn.Workspace {
			return adapterWorkspace(t, "testdata/adk/session.jsonl", nil)
		},
		"adk unconverted": func(t *testing.T) *cairn.Workspace {
			return adapterWorkspace(t, "testdata/adk/session.jsonl", func(st *langGraphStep) {
				editJSON(st, func(state map[string]any) {
					if evs, _ := state["events"].([]any); len(evs) > 2 {
						evs[2].(map[string]any)["Content"].(map[string]any)["role"] = "robot"
					}
				})
			})
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			ws := mk(t)
			for _, format := range export.Formats {
				out, sum, _ := runLong(t, ws, export.Options{Format: format})
				switch {
				case format == export.Preference && name == "langgraph" && sum.Pairs != 1:
					t.Errorf("%d pairs, want the fork's against the thread's", sum.Pairs)
				case format != export.Preference && len(out) == 0 && len(sum.Skipped) == 0:
					t.Errorf("%s: nothing written, nothing skipped", format)
				}
			}
		})
	}
}
