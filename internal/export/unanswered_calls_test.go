package export_test

import (
	"context"
	"testing"

	"github.com/cairnlog/cairn/internal/export"
)

// A tool call the trajectory holds no result for was written to
// openai-jsonl as is, which OpenAI's fine-tuning validator refuses (an
// assistant message with tool_calls must be followed by tool messages
// answering each id), and to sharegpt as a function_call turn no
// observation answers. When the session ended, or was forked, right
// after the model asked for a tool, the chat formats leave that last
// assistant message out and say so; a call left unanswered before the
// conversation goes on is a hole, and the trajectory is skipped, named.
// ATIF and Parquet carry the call as recorded.
func TestUnansweredToolCalls(t *testing.T) {
	ctx := context.Background()
	ws := emptyStore(t)
	done := `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"read","arguments":{}}]},{"role":"tool","tool_call_id":"c1","content":"r1"},{"role":"assistant","content":"a1"}]}`
	commitRecords(t, ws, "ended", done,
		`{"messages":[{"role":"user","content":"more"},{"role":"assistant","content":"Let me look.","tool_calls":[{"id":"c2","name":"read","arguments":{}}]}]}`)
	commitRecords(t, ws, "half-answered", done,
		`{"messages":[{"role":"user","content":"more"},{"role":"assistant","content":"","tool_calls":[{"id":"c2","name":"read","arguments":{}},{"id":"c3","name":"read","arguments":{}}]},{"role":"tool","tool_call_id":"c2","content":"r2"}]}`)
	commitRecords(t, ws, "went-on", done,
		`{"messages":[{"role":"user","content":"more"},{"role":"assistant","content":"","tool_calls":[{"id":"c2","name":"read","arguments":{}}]},{"role":"assistant","content":"never mind"}]}`)
	// A fork made right after a tool call: base@2 asks for a tool; the
	// fork answers it one way, base another; fork-idle (and its own fork)
	// ends on the call; fork-idle2, a fork of that fork, goes on
	// without the result.
	commitRecords(t, ws, "base", `{"messages":[{"role":"user","content":"q"}]}`,
		`{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"k1","name":"read","arguments":{"p":1}}]}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"k1","content":"old"},{"role":"assistant","content":"b"}],"outcome":"failure"}`)
	fork(ctx, t, ws, "base@2", "forked")
	commitRecords(t, ws, "forked", `{"messages":[{"role":"tool","tool_call_id":"k1","content":"new"},{"role":"assistant","content":"f"}],"outcome":"success"}`)
	fork(ctx, t, ws, "base@2", "fork-idle")
	fork(ctx, t, ws, "fork-idle@2", "fork-idle2")
	commitRecords(t, ws, "fork-idle2", `{"messages":[{"role":"user","content":"hello?"}]}`)

	cut := []string{"ended", "half-answered", "fork-idle"}
	for _, f := range []string{export.OpenAIJSONL, export.ShareGPT} {
		out, sum, _ := run(t, ws, export.Options{Format: f, Branches: export.All})
		got := byID(t, out, "id")
		for _, s := range []string{"base", "ended", "forked", "half-answered"} {
			if got[s] == nil {
				t.Errorf("%s: %s not written: skipped %+v", f, s, sum.Skipped)
			}
		}
		for _, s := range []string{"went-on", "fork-idle2"} {
			if noted(sum.Skipped, "no tool result answers", s) == nil {
				t.Errorf("%s: %s not skipped for its unanswered call: %+v", f, s, sum.Skipped)
			}
		}
		for _, s := range cut {
			if _, ok := got[s]; ok && noted(sum.LeftOut, "last assistant message left out", s) == nil {
				t.Errorf("%s: %s written without a note of its cut call: %+v", f, s, sum.LeftOut)
			}
		}
		for id, o := range got {
			switch f {
			case export.OpenAIJSONL:
				if err := export.OpenAIChatError(asList(o["messages"])); err != nil {
					t.Errorf("%s: %s: %v: %v", f, id, err, o["messages"])
				}
			case export.ShareGPT:
				if err := export.LlamaFactoryShareGPTError(asList(o["conversations"])); err != nil {
					t.Errorf("%s: %s: %v", f, id, err)
				}
				conv := asList(o["conversations"])
				for i, turn := range conv {
					if turn.(map[string]any)["from"] == "function_call" && (i+1 == len(conv) || conv[i+1].(map[string]any)["from"] != "observation") {
						t.Errorf("%s: %s: function_call turn %d has no observation after it: %v", f, id, i, conv)
					}
				}
			}
		}
		if f == export.OpenAIJSONL {
			msgs := asList(got["ended"]["messages"])
			if len(msgs) != 5 || msgs[4].(map[string]any)["content"] != "more" {
				t.Errorf("ended: %v, want its first 5 messages", msgs)
			}
		}
	}

	// ATIF keeps the call (a step may have calls without results).
	out, _, _ := run(t, ws, export.Options{Format: export.ATIF, Sessions: []string{"ended"}})
	steps := asList(lines(t, out)[0]["steps"])
	if last := steps[len(steps)-1].(map[string]any); len(asList(last["tool_calls"])) != 1 || last["message"] != "Let me look." {
		t.Errorf("atif: last step %v, want the unanswered call", last)
	}

	// Preference: the prompt ends with the call made at the fork point;
	// each branch starts with its answer, and prompt + branch is one
	// conversation OpenAI's rule accepts.
	out, _, _ = runLong(t, ws, export.Options{Format: export.Preference})
	pairs := lines(t, out)
	if len(pairs) != 1 {
		t.Fatalf("preference: %d pairs, want 1:\n%s", len(pairs), out)
	}
	for _, side := range []string{"chosen", "rejected"} {
		conv := append(asList(pairs[0]["prompt"]), asList(pairs[0][side])...)
		if err := export.OpenAIChatError(conv); err != nil {
			t.Errorf("preference prompt + %s: %v: %v", side, err, conv)
		}
	}
}
