package export_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/cairnlog/cairn/internal/export"
)

// TestPreferencePromptOfThePointChecked: when every branch after a fork
// point is pruned up to it, the prompt is read from the point's own
// path. Only its function names were checked there: a prompt holding a
// record of the wrong shape, a tool result that follows no call, or a
// call left unanswered before the conversation goes on was written into
// pairs, though the same prompt read from an unpruned branch skips the
// branches, named; and a branch pruned so beside an unpruned one was
// checked without its prompt, so it went unnamed. The branches are
// skipped with the same notes either way, held whole and streamed.
func TestPreferencePromptOfThePointChecked(t *testing.T) {
	for _, c := range []struct {
		name  string
		point []string // a's records, a@3 the fork point
	}{
		{"wrong shape", []string{
			`{"messages":[{"role":"user","content":"hi"}]}`,
			`{"messages":[{"role":"robot","content":"?"},{"role":"assistant","content":"a"}]}`,
			`{"messages":[{"role":"user","content":"go on"}]}`}},
		{"result without call", []string{
			`{"messages":[{"role":"user","content":"hi"}]}`,
			`{"messages":[{"role":"tool","tool_call_id":"z","content":"?"},{"role":"assistant","content":"no"}]}`,
			`{"messages":[{"role":"user","content":"go on"}]}`}},
		{"call unanswered mid-way", []string{
			`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"b"}]}]}`,
			`{"messages":[{"role":"user","content":"well?"},{"role":"assistant","content":"no"}]}`,
			`{"messages":[{"role":"user","content":"go on"}]}`}},
		{"function name", []string{
			`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"ns.tool"}]}]}`,
			`{"messages":[{"role":"tool","tool_call_id":"c1","content":"1"},{"role":"assistant","content":"done"}]}`,
			`{"messages":[{"role":"user","content":"go on"}]}`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			ws := emptyStore(t)
			commitRecords(t, ws, "a", c.point...)
			for _, b := range []struct{ name, recs string }{
				{"b", `{"messages":[{"role":"assistant","content":"b says"}],"outcome":"success"}`},
				{"c", `{"messages":[{"role":"assistant","content":"c says"}],"outcome":"failure"}`},
			} {
				fork(ctx, t, ws, "a@3", b.name)
				commitRecords(t, ws, b.name, `{"messages":[{"role":"assistant","content":"thinking"}]}`, b.recs)
			}
			// Read from an unpruned branch.
			out, want, _ := runLong(t, ws, export.Options{Format: export.Preference})
			if want.Pairs != 0 || len(want.Skipped) != 1 || !reflect.DeepEqual(want.Skipped[0].Names, []string{"b", "c"}) {
				t.Fatalf("unpruned: %d pairs, skipped %+v, want b and c skipped, named: %s", want.Pairs, want.Skipped, out)
			}
			// b pruned up to the point, then c too: the prompt read
			// from a@3's path.
			for _, b := range []string{"b", "c"} {
				if _, err := ws.Prune(ctx, b, 2); err != nil {
					t.Fatal(err)
				}
				out, sum, _ := runLong(t, ws, export.Options{Format: export.Preference})
				if sum.Pairs != 0 || out != "" || !reflect.DeepEqual(sum.Skipped, want.Skipped) {
					t.Errorf("%s pruned up to the point: %d pairs, skipped %+v, want none and skipped %+v:\n%s", b, sum.Pairs, sum.Skipped, want.Skipped, out)
				}
			}
		})
	}
}

// TestPreferencePromptOfThePointRawNoted: a raw record in the prompt,
// read from an unpruned branch, is left out and noted for each branch
// paired; read from the fork point's own path (every branch pruned up
// to the point) it was left out without a word. The pairs and notes are
// the same either way, held whole and streamed.
func TestPreferencePromptOfThePointRawNoted(t *testing.T) {
	ctx := context.Background()
	ws := emptyStore(t)
	commitRecords(t, ws, "a",
		`{"messages":[{"role":"user","content":"hi"}]}`,
		`{"foo":1}`,
		`{"messages":[{"role":"assistant","content":"a"},{"role":"user","content":"go on"}]}`)
	for _, b := range []struct{ name, recs string }{
		{"b", `{"messages":[{"role":"assistant","content":"b says"}],"outcome":"success"}`},
		{"c", `{"messages":[{"role":"assistant","content":"c says"}],"outcome":"failure"}`},
	} {
		fork(ctx, t, ws, "a@3", b.name)
		commitRecords(t, ws, b.name, `{"messages":[{"role":"assistant","content":"thinking"}]}`, b.recs)
	}
	want, wantSum, _ := runLong(t, ws, export.Options{Format: export.Preference})
	if wantSum.Pairs != 1 || len(wantSum.LeftOut) != 1 || !reflect.DeepEqual(wantSum.LeftOut[0].Names, []string{"b", "c"}) {
		t.Fatalf("unpruned: %d pairs, left out %+v, want 1 pair, a@2 noted for b and c: %s", wantSum.Pairs, wantSum.LeftOut, want)
	}
	// b pruned up to the point takes its prompt from c's path; then
	// both pruned, from a@3's.
	for _, b := range []string{"b", "c"} {
		if _, err := ws.Prune(ctx, b, 2); err != nil {
			t.Fatal(err)
		}
		out, sum, _ := runLong(t, ws, export.Options{Format: export.Preference})
		if out != want || !reflect.DeepEqual(sum, wantSum) {
			t.Errorf("%s pruned up to the point: %d pairs, skipped %+v, left out %+v, want %d, %+v, %+v:\n%s\nunpruned:\n%s",
				b, sum.Pairs, sum.Skipped, sum.LeftOut, wantSum.Pairs, wantSum.Skipped, wantSum.LeftOut, out, want)
		}
	}
}
