package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/cairnlog/cairn/internal/export"
	"github.com/parquet-go/parquet-go"
)

// A call's argument x names the result that answers it.
const (
	dupWithin = `{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"","tool_calls":[` +
		`{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"x\":\"a\"}"}},` +
		`{"id":"c1","type":"function","function":{"name":"g","arguments":"{\"x\":\"b\"}"}},` +
		`{"id":"c1#2","name":"h","arguments":{"x":"c"}}]},` +
		`{"role":"tool","tool_call_id":"c1#2","content":"c"},{"role":"tool","tool_call_id":"c1","content":"a"},{"role":"tool","tool_call_id":"c1","content":"b"},` +
		`{"role":"assistant","content":"done"}]}`
	// c1 made, left unanswered while the user speaks, and made again.
	dupPending1 = `{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"f","arguments":{"x":"a"}}]}]}`
	dupPending2 = `{"messages":[{"role":"user","content":"and?"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"f","arguments":{"x":"b"}}]},{"role":"tool","tool_call_id":"c1","content":"b"},{"role":"assistant","content":"done"}]}`
)

// checkCallIDs fails unless, in msgs (OpenAI-shaped or as recorded),
// every tool call has an id no other call has, and every tool result
// names exactly one call: the one its content says answers it.
func checkCallIDs(t *testing.T, what string, msgs []any) {
	t.Helper()
	x := map[string]string{} // call id -> its argument x
	for _, m := range msgs {
		m := m.(map[string]any)
		for _, tc := range asList(m["tool_calls"]) {
			tc := tc.(map[string]any)
			id, _ := tc["id"].(string)
			args := tc["arguments"]
			if f, ok := tc["function"].(map[string]any); ok {
				args = f["arguments"]
			}
			if s, ok := args.(string); ok {
				_ = json.Unmarshal([]byte(s), &args)
			}
			if _, dup := x[id]; dup {
				t.Errorf("%s: two calls with id %q: %v", what, id, msgs)
			}
			x[id], _ = args.(map[string]any)["x"].(string)
		}
		if m["role"] == "tool" {
			if id, _ := m["tool_call_id"].(string); x[id] != m["content"] {
				t.Errorf("%s: result %q names call %q, answered by %q", what, m["content"], id, x[id])
			}
		}
	}
}

// TestDuplicateToolCallIDs: an agent may give two calls one id (twice
// in one message, or again while the first is unanswered). ATIF made
// them unique, but openai-jsonl, preference and parquet wrote both calls
// under one id and both results naming it, which OpenAI's format (one
// call per tool_call_id) cannot pair. Every format now gives a later
// call <id>#2, … (past ids the agent uses itself), and each result the
// id of the call it answers, in the calls' order.
func TestDuplicateToolCallIDs(t *testing.T) {
	ctx := context.Background()
	ws := emptyStore(t)
	commitRecords(t, ws, "within", dupWithin)
	commitRecords(t, ws, "pending", dupPending1, dupPending2)
	// Preference: two branches after a fork point, each reusing c1.
	commitRecords(t, ws, "base", `{"messages":[{"role":"user","content":"go"}]}`, dupWithin[:len(dupWithin)-1]+`,"outcome":"failure"}`)
	fork(ctx, t, ws, "base@1", "better")
	commitRecords(t, ws, "better", dupWithin[:len(dupWithin)-1]+`,"outcome":"success"}`)

	out, _, _ := runLong(t, ws, export.Options{Format: export.OpenAIJSONL, Sessions: []string{"within"}})
	for _, l := range lines(t, out) {
		checkCallIDs(t, "openai-jsonl", asList(l["messages"]))
	}
	out, _, _ = runLong(t, ws, export.Options{Format: export.Preference})
	pairs := lines(t, out)
	if len(pairs) != 1 {
		t.Fatalf("preference: %d pairs, want 1: %s", len(pairs), out)
	}
	for _, k := range []string{"chosen", "rejected"} {
		checkCallIDs(t, "preference "+k, append(asList(pairs[0]["prompt"]), asList(pairs[0][k])...))
	}

	out, _, _ = runLong(t, ws, export.Options{Format: export.Parquet, Sessions: []string{"within", "pending"}})
	rows, err := parquet.Read[struct {
		Trajectory string  `parquet:"trajectory"`
		Messages   *string `parquet:"messages,optional"`
	}](bytes.NewReader([]byte(out)), int64(len(out)))
	if err != nil {
		t.Fatal(err)
	}
	byTrajectory := map[string][]any{}
	for _, r := range rows {
		var msgs []any
		if err := json.Unmarshal([]byte(*r.Messages), &msgs); err != nil {
			t.Fatal(err)
		}
		byTrajectory[r.Trajectory] = append(byTrajectory[r.Trajectory], msgs...)
	}
	if len(byTrajectory) != 2 {
		t.Fatalf("parquet: trajectories %v", byTrajectory)
	}
	for name, msgs := range byTrajectory {
		checkCallIDs(t, "parquet "+name, msgs)
	}
}
