package export_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/export"
)

// TestPreferenceForkAfterAToolCallPrunedUpToThePoint: b and c, forked
// from a@3 right after its tool call, start with the call's result and
// are paired. Pruned up to the point, a branch's path was checked alone,
// without the prompt it follows: its first message, the result, then
// followed no tool call, and the branch was skipped under that reason,
// held whole and streamed. Its prompt read from c's path (b pruned) or
// from a@3's (both), the pairs and notes are those of the unpruned
// branches.
func TestPreferenceForkAfterAToolCallPrunedUpToThePoint(t *testing.T) {
	ctx := context.Background()
	ws := emptyStore(t)
	commitRecords(t, ws, "a",
		`{"messages":[{"role":"system","content":"s"},{"role":"user","content":"list it"}]}`,
		`{"messages":[{"role":"assistant","content":"sure"},{"role":"user","content":"go on"}]}`,
		`{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"ls"}]}]}`)
	for _, b := range []struct{ name, outcome string }{{"b", "success"}, {"c", "failure"}} {
		fork(ctx, t, ws, "a@3", b.name)
		commitRecords(t, ws, b.name,
			`{"messages":[{"role":"tool","tool_call_id":"c1","content":"files of `+b.name+`"}]}`,
			`{"messages":[{"role":"assistant","content":"`+b.name+` says"}]}`,
			`{"outcome":"`+b.outcome+`"}`)
	}
	want, wantSum, _ := runLong(t, ws, export.Options{Format: export.Preference})
	if wantSum.Pairs != 1 || !strings.Contains(want, `"files of b"`) || len(wantSum.Skipped) != 0 {
		t.Fatalf("unpruned: %d pairs, skipped %+v, want b's against c's: %s", wantSum.Pairs, wantSum.Skipped, want)
	}
	for _, b := range []string{"b", "c"} {
		if _, err := ws.Prune(ctx, b, 3); err != nil {
			t.Fatal(err)
		}
		out, sum, _ := runLong(t, ws, export.Options{Format: export.Preference})
		if out != want || !reflect.DeepEqual(sum, wantSum) {
			t.Errorf("%s pruned up to the point: %d pairs, skipped %+v, left out %+v, want the pair of before:\n%s\nbefore:\n%s",
				b, sum.Pairs, sum.Skipped, sum.LeftOut, out, want)
		}
	}
}
