package export_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/export"
)

// chatCheckCases are conversations the chat formats skip, or cut, each
// its own session of at least two steps: one trajectory of them takes
// the streamed path when export holds one step at a time.
var chatCheckCases = []struct {
	session string
	// openai is a word of the note openai-jsonl gives it, skipped or
	// written.
	openai  string
	records []string
}{
	{"wrong-shape", "wrong shape", []string{
		`{"messages":[{"role":"user","content":"hi"}]}`,
		`{"messages":[{"role":"robot","content":"?"},{"role":"assistant","content":"a"}]}`}},
	{"result-first", "follows no tool call", []string{
		`{"messages":[{"role":"user","content":"hi"}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"z","content":"?"},{"role":"assistant","content":"no"}]}`}},
	{"hole", "before the conversation goes on", []string{
		`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"b"}]}]}`,
		`{"messages":[{"role":"user","content":"well?"},{"role":"assistant","content":"no"}]}`}},
	{"cut-last", "the last assistant message left out", []string{
		`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ok"}]}`,
		`{"messages":[{"role":"user","content":"more"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"b"},{"id":"c2","name":"b"}]}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"c1","content":"1"}]}`}},
	{"cut-only", "no assistant message", []string{
		`{"messages":[{"role":"user","content":"hi"}]}`,
		`{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"b"}]}]}`}},
	{"other-id", "no call of the assistant message", []string{
		`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"b"}]}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"c1","content":"1"},{"role":"tool","tool_call_id":"c9","content":"9"}]}`,
		`{"messages":[{"role":"assistant","content":"done"}]}`}},
	{"twice", "another result answered already", []string{
		`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"b"}]}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"c1","content":"1"},{"role":"tool","tool_call_id":"c1","content":"again"},{"role":"assistant","content":"done"}]}`}},
	{"no-assistant", "no assistant message", []string{
		`{"messages":[{"role":"system","content":"s"}]}`,
		`{"messages":[{"role":"user","content":"hi"}]}`}},
	{"raw-only", "raw records only", []string{`{"foo":1}`, `{"bar":2}`}},
	{"raw-beside", "raw records (not following docs/records.md) left out", []string{
		`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"a"}]}`,
		`{"foo":1}`}},
	{"no-messages", "no chat messages", []string{`{"labels":{"k":"v"}}`, `{"outcome":"success"}`}},
	{"call-name", "function name", []string{
		`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"ns.tool"}]}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"c1","content":"1"},{"role":"assistant","content":"done"}]}`}},
	{"tool-name", "function name", []string{
		`{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"my tool"}}]}`,
		`{"messages":[{"role":"assistant","content":"done"}]}`}},
	{"name-cut", "the last assistant message left out", []string{
		`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ok"}]}`,
		`{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"my tool"}]}]}`}},
}

// TestChatChecksSameHeldAndStreamed: a trajectory held whole and one too
// long to hold, read again a run at a time (openai_long.go), go through
// one set of checks. Each conversation that breaks a rule of OpenAI's
// format (or the chat formats') is exported on its own both ways — held,
// and holding one step at a time, which streams every trajectory of two
// steps or more — and must get the same verdict, in the same words, and
// the same line if it is written.
func TestChatChecksSameHeldAndStreamed(t *testing.T) {
	ws := emptyStore(t)
	for _, c := range chatCheckCases {
		commitRecords(t, ws, c.session, c.records...)
	}
	for _, format := range []string{export.OpenAIJSONL, export.ShareGPT} {
		for _, c := range chatCheckCases {
			opts := export.Options{Format: format, Sessions: []string{c.session}}
			streamed := map[string]bool{}
			restore := export.SetRereadRunForTest(func(h *cairn.Step) { streamed[h.Session] = true })
			held, heldSum, _ := run(t, ws, opts)
			if streamed[c.session] {
				t.Fatalf("%s, %s: held whole, yet read again", format, c.session)
			}
			undo := export.SetHoldForTest(1, 1<<40, 0)
			got, sum, _ := run(t, ws, opts)
			undo()
			restore()
			if !streamed[c.session] {
				t.Fatalf("%s, %s: holding one step at a time, not read again as a long trajectory", format, c.session)
			}
			what := fmt.Sprintf("%s, %s", format, c.session)
			if got != held {
				t.Errorf("%s: streamed wrote %q, held %q", what, got, held)
			}
			if !reflect.DeepEqual(sum.Skipped, heldSum.Skipped) || !reflect.DeepEqual(sum.LeftOut, heldSum.LeftOut) {
				t.Errorf("%s: streamed skipped %+v, left out %+v; held %+v, %+v", what, sum.Skipped, sum.LeftOut, heldSum.Skipped, heldSum.LeftOut)
			}
			if held == "" && len(heldSum.Skipped) != 1 {
				t.Errorf("%s: not written, and skipped %+v", what, heldSum.Skipped)
			}
			if held != "" {
				lines(t, held)
			}
			if format == export.OpenAIJSONL && noted(append(heldSum.Skipped, heldSum.LeftOut...), c.openai, c.session) == nil {
				t.Errorf("%s: no note says %q: skipped %+v, left out %+v", what, c.openai, heldSum.Skipped, heldSum.LeftOut)
			}
		}
	}
}
