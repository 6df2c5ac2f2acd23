package export_test

import (
	"testing"

	"github.com/cairnlog/cairn/internal/export"
)

// A tool result whose tool_call_id no call of the assistant message
// before it has was written to openai-jsonl, which OpenAI refuses
// ("tool_call_id ... not found in tool_calls of previous message"). It
// is skipped there, named; sharegpt keeps the result after the others,
// as documented.
func TestOpenAIResultForNoCallSkipped(t *testing.T) {
	ws := emptyStore(t)
	commitRecords(t, ws, "stray",
		`{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"f","arguments":{}}]},{"role":"tool","tool_call_id":"c1","content":"r"},{"role":"tool","tool_call_id":"zz","content":"for no call"},{"role":"assistant","content":"done"}]}`)
	commitRecords(t, ws, "typo",
		`{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"f","arguments":{}}]}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"c-1","content":"r"},{"role":"assistant","content":"done"}]}`)
	out, sum, _ := run(t, ws, export.Options{Format: export.OpenAIJSONL})
	if out != "" {
		t.Errorf("openai-jsonl wrote %s", out)
	}
	for _, s := range []string{"stray", "typo"} {
		if n := noted(sum.Skipped, "tool", s); n == nil {
			t.Errorf("%s not skipped: %+v", s, sum.Skipped)
		}
	}
	if n := noted(sum.Skipped, "no call of the assistant message before it", "stray"); n == nil || n.Example != `stray@1: messages[3]: tool_call_id "zz"` {
		t.Errorf("stray: skipped %+v", sum.Skipped)
	}
	out, sum, _ = run(t, ws, export.Options{Format: export.ShareGPT, Sessions: []string{"stray"}})
	if len(lines(t, out)) != 1 {
		t.Errorf("sharegpt: %q, skipped %+v; want stray kept", out, sum.Skipped)
	}
}
