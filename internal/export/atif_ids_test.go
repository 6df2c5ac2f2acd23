package export_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/export"
)

// An agent may reuse a tool call id: "call_1" in every step, or twice in
// one message. ATIF joins a result to its call by id, so the export
// gives every call of a trajectory an id of its own (the first use keeps
// the agent's, a later one gets "#2", "#3", … and its original id in the
// step's extra.original_tool_call_ids), and gives each result to the call
// it answers: the nearest preceding assistant message's first unanswered
// call of that id. Before, the ids were written as given (two in one step
// fail Harbor's validator) and every result went to the last call of its
// id, whichever call it answered.
func TestATIFDuplicateToolCallIDs(t *testing.T) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	// A call's argument says which result answers it: {"x":"a"} is
	// answered by "a".
	call := func(id, x string) cairn.ToolCall {
		return cairn.ToolCall{ID: id, Name: "ls", Arguments: json.RawMessage(fmt.Sprintf(`{"x":%q}`, x))}
	}
	result := func(id, x string) cairn.Message { return cairn.Message{Role: "tool", ToolCallID: id, Content: x} }
	asst := func(calls ...cairn.ToolCall) cairn.Message { return cairn.Message{Role: "assistant", ToolCalls: calls} }
	sessions := map[string][][]cairn.Message{
		// call_1 in every step, each answered in its step.
		"across": {
			{{Role: "user", Content: "go"}, asst(call("call_1", "a")), result("call_1", "a")},
			{asst(call("call_1", "b")), result("call_1", "b")},
			{asst(call("call_1", "c"), call("call_2", "d")), result("call_2", "d"), result("call_1", "c")},
		},
		// call_1 twice in one message: results in the calls' order.
		"within": {
			{{Role: "user", Content: "go"}, asst(call("call_1", "a"), call("call_1", "b")), result("call_1", "a"), result("call_1", "b")},
		},
		// call_1 left unanswered, then made again: the first result
		// answers the nearer call, the second the older one.
		"pending": {
			{{Role: "user", Content: "go"}, asst(call("call_1", "a"))},
			{asst(call("call_1", "b")), result("call_1", "b")},
			{result("call_1", "a"), {Role: "assistant", Content: "done"}},
		},
		// The agent's own ids include the one a renaming would pick.
		"taken": {
			{{Role: "user", Content: "go"}, asst(call("k", "a"), call("k#2", "b"), call("k", "c")),
				result("k", "a"), result("k#2", "b"), result("k", "c")},
		},
	}
	for name, steps := range sessions {
		s, _ := ws.Session(name)
		for _, msgs := range steps {
			if _, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), rec(t, cairn.Record{Messages: msgs})); err != nil {
				t.Fatal(err)
			}
		}
	}
	out, sum, _ := runLong(t, ws, export.Options{Format: export.ATIF})
	docs := lines(t, out)
	if len(docs) != len(sessions) {
		t.Fatalf("%d documents, want %d", len(docs), len(sessions))
	}
	if len(sum.LeftOut) != 0 {
		t.Errorf("left out: %+v", sum.LeftOut)
	}
	for _, d := range docs {
		name := d["session_id"]
		if err := harborATIFError(d); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		arg := map[string]string{}  // tool_call_id -> its argument x
		orig := map[string]string{} // tool_call_id -> the agent's id
		results := 0
		for _, s := range asList(d["steps"]) {
			s := s.(map[string]any)
			renamed, _ := s["extra"].(map[string]any)["original_tool_call_ids"].(map[string]any)
			for _, tc := range asList(s["tool_calls"]) {
				tc := tc.(map[string]any)
				id := tc["tool_call_id"].(string)
				if _, dup := arg[id]; dup {
					t.Errorf("%s: tool_call_id %q used twice", name, id)
				}
				arg[id] = tc["arguments"].(map[string]any)["x"].(string)
				orig[id] = id
				if o, ok := renamed[id]; ok {
					orig[id] = o.(string)
				}
			}
			obs, ok := s["observation"].(map[string]any)
			if !ok {
				continue
			}
			for _, r := range asList(obs["results"]) {
				r := r.(map[string]any)
				id, _ := r["source_call_id"].(string)
				results++
				if arg[id] != r["content"] {
					t.Errorf("%s: result %q given to call %q, which is answered by %q", name, r["content"], id, arg[id])
				}
			}
		}
		if results != len(arg) {
			t.Errorf("%s: %d results for %d calls", name, results, len(arg))
		}
		if name == "taken" {
			want := map[string]string{"k": "k", "k#2": "k#2", "k#3": "k"}
			if fmt.Sprint(orig) != fmt.Sprint(want) {
				t.Errorf("taken: ids %v, want %v", orig, want)
			}
		}
		if name == "across" {
			want := map[string]string{"call_1": "call_1", "call_1#2": "call_1", "call_1#3": "call_1", "call_2": "call_2"}
			if fmt.Sprint(orig) != fmt.Sprint(want) {
				t.Errorf("across: ids %v, want %v", orig, want)
			}
		}
	}
}
