package export_test

import (
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/export"
)

// TestToolResultWithoutCallSkipped: a tool result recorded before the
// call it answers, or after a message that called no tool, was written
// as is to openai-jsonl (a tool message that follows no tool-calling
// message, which OpenAI's format refuses) and merged into the user's text in sharegpt,
// so the model would learn the tool's output as the user's words —
// without a word either way. The chat formats skip such a trajectory
// and name it; ATIF still carries it (null source_call_id, noted).
func TestToolResultWithoutCallSkipped(t *testing.T) {
	ws := emptyStore(t)
	commitRecords(t, ws, "result-first", `{"messages":[{"role":"user","content":"q"},{"role":"tool","tool_call_id":"c1","content":"early"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"f","arguments":{}}]},{"role":"assistant","content":"done"}]}`)
	commitRecords(t, ws, "no-call", `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"let me see"},{"role":"tool","tool_call_id":"zz","content":"stray"},{"role":"assistant","content":"done"}]}`)
	commitRecords(t, ws, "fine", `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"f","arguments":{}}]}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"c1","content":"r"},{"role":"assistant","content":"done"}]}`)
	for _, f := range []string{export.OpenAIJSONL, export.ShareGPT} {
		out, sum, heads := run(t, ws, export.Options{Format: f})
		if got := strings.Join(headNames(heads), ","); got != "fine" {
			t.Errorf("%s: exported %s, want only fine: %s", f, got, out)
		}
		for _, s := range []string{"result-first", "no-call"} {
			if noted(sum.Skipped, "tool result", s) == nil {
				t.Errorf("%s: %s not named: skipped %+v", f, s, sum.Skipped)
			}
		}
	}
}
