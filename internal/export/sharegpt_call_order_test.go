package export_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/export"
)

// Parallel tool results become one ShareGPT observation turn, a JSON
// list of their contents in the order of the calls they answer (as
// docs/export.md says), whatever order the agent recorded them in: the
// reader pairs the lists by position, so results in the order they
// finished would pair each call with another call's result.
func TestShareGPTObservationInCallOrder(t *testing.T) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	call := func(id, name string) cairn.ToolCall {
		return cairn.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(`{}`)}
	}
	s, _ := ws.Session("s")
	r := cairn.Record{Messages: []cairn.Message{{Role: "user", Content: "go"},
		{Role: "assistant", ToolCalls: []cairn.ToolCall{call("c1", "a"), call("c2", "b"), call("c1", "c")}},
		{Role: "tool", ToolCallID: "zz", Content: "for no call"},
		{Role: "tool", ToolCallID: "c2", Content: "b's"},
		{Role: "tool", ToolCallID: "c1", Content: "a's"},
		{Role: "tool", ToolCallID: "c1", Content: "c's"},
		{Role: "assistant", Content: "done"},
	}}
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), rec(t, r)); err != nil {
		t.Fatal(err)
	}
	out, _, _ := run(t, ws, export.Options{Format: export.ShareGPT})
	docs := lines(t, out)
	if len(docs) != 1 {
		t.Fatalf("%d lines, want 1:\n%s", len(docs), out)
	}
	var obs string
	for _, turn := range docs[0]["conversations"].([]any) {
		if m := turn.(map[string]any); m["from"] == "observation" {
			obs = m["value"].(string)
		}
	}
	// Calls in order; a result for no call after them, as given.
	if want := `["a's","b's","c's","for no call"]`; obs != want {
		t.Errorf("observation %s, want %s", obs, want)
	}
}
