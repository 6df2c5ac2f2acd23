package export_test

import (
	"testing"

	"github.com/cairnlog/cairn/internal/export"
)

// TestToolResultAnsweringOneCallTwice: two tool results naming one call
// (c1 made once, answered "r", then "r again") were written to
// openai-jsonl as given: a reader pairing results by id got two answers
// to one call, and OpenAI's format wants each call answered once. The
// second answer now names a call no longer open, and the trajectory is
// skipped, named, as one with a result for no call is; one whose
// results each answer their own call is written.
func TestToolResultAnsweringOneCallTwice(t *testing.T) {
	ws := emptyStore(t)
	commitRecords(t, ws, "twice",
		`{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"read","arguments":{}}]},{"role":"tool","tool_call_id":"c1","content":"r"}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"c1","content":"r again"},{"role":"assistant","content":"done"}]}`)
	commitRecords(t, ws, "once",
		`{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"read","arguments":{}},{"id":"c2","name":"read","arguments":{}}]},{"role":"tool","tool_call_id":"c2","content":"r2"}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"c1","content":"r1"},{"role":"assistant","content":"done"}]}`)
	out, sum, _ := runLong(t, ws, export.Options{Format: export.OpenAIJSONL})
	got := byID(t, out, "id")
	if _, ok := got["twice"]; ok {
		t.Errorf("twice written with two answers to one call: %s", out)
	}
	if noted(sum.Skipped, "names a call another result answered already", "twice") == nil {
		t.Errorf("twice not skipped for its second answer: %+v", sum.Skipped)
	}
	if got["once"] == nil {
		t.Errorf("once, each call answered once, not written: skipped %+v", sum.Skipped)
	}
}
