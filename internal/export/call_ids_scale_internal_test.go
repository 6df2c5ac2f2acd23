package export

import (
	"testing"
	"time"

	"github.com/cairnlog/cairn"
)

// A record of many tool calls and results without ids (an 8 MiB record
// holds hundreds of thousands) is paired in time linear in them: each
// result takes the next unanswered call from a queue, never scanning the
// answered ones again.
func TestToolCallIDsManyCallsLinear(t *testing.T) {
	const n = 200_000
	rec := &cairn.Record{Messages: []cairn.Message{{Role: "assistant", ToolCalls: make([]cairn.ToolCall, n)}}}
	for i := range n {
		rec.Messages[0].ToolCalls[i].Name = "ls"
		rec.Messages = append(rec.Messages, cairn.Message{Role: "tool", Name: "ls"})
	}
	tr := &Trajectory{Steps: []Step{{Step: &cairn.Step{Session: "s", Number: 1}, Rec: rec}}}
	start := time.Now()
	if where := settleCallIDs(tr); where != "" {
		t.Fatalf("unpaired: %s", where)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("%d calls and results settled in %v", n, d)
	}
	if got := rec.Messages[n].ToolCallID; got != "call_1_200000" {
		t.Errorf("the last result answers %q, want call_1_200000", got)
	}
}
