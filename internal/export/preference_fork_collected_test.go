package export_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/export"
)

// TestPreferenceForkPrunedAndCollectedNamed: forks b and c of a@3, each
// pruned to its own steps after the point, are paired (with a's own
// continuation too) while their copies of a@3, below their bases, still
// read: the copy names the origin. Once gc has collected the copies,
// nothing b or c keeps says which step they were forked from (their
// oldest step names only the copy it followed), so they cannot be
// grouped, and they were dropped without a word, held whole and
// streamed: no pair and no note. They are named among the skipped.
func TestPreferenceForkPrunedAndCollectedNamed(t *testing.T) {
	ctx := context.Background()
	ws := emptyStore(t)
	agentRun(ctx, t, ws, "a", 3, "", nil)
	continueRun(ctx, t, ws, "a", 1, "failure", nil)
	for _, b := range []struct{ name, outcome string }{{"b", "success"}, {"c", "failure"}} {
		fork(ctx, t, ws, "a@3", b.name)
		continueRun(ctx, t, ws, b.name, 2, b.outcome, nil)
		if _, err := ws.Prune(ctx, b.name, 2); err != nil {
			t.Fatal(err)
		}
	}
	// An unjudged session pruned and collected is no branch to name.
	agentRun(ctx, t, ws, "d", 3, "", nil)
	if _, err := ws.Prune(ctx, "d", 1); err != nil {
		t.Fatal(err)
	}
	out, sum, _ := runLong(t, ws, export.Options{Format: export.Preference})
	if sum.Pairs != 2 || !strings.Contains(out, `"b says 2"`) || len(sum.Skipped) != 0 {
		t.Fatalf("pruned up to the point: %d pairs, skipped %+v, want b's against a's and c's: %s", sum.Pairs, sum.Skipped, out)
	}
	now := time.Now()
	for _, later := range []time.Duration{time.Hour, 2 * time.Hour} {
		if _, err := ws.GC(ctx, cairn.GCOptions{Grace: 0, Now: now.Add(later)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ws.ReadStep(ctx, "b", 3); err == nil {
		t.Fatal("gc kept b's copy of a@3: the test tests nothing")
	}
	out, sum, _ = runLong(t, ws, export.Options{Format: export.Preference})
	if sum.Pairs != 0 || out != "" {
		t.Fatalf("collected: %d pairs, want none: %s", sum.Pairs, out)
	}
	if len(sum.Skipped) != 1 || !reflect.DeepEqual(sum.Skipped[0].Names, []string{"b", "c"}) ||
		!strings.Contains(sum.Skipped[0].Reason, "cairn gc") || !strings.Contains(sum.Skipped[0].Example, "b@3") {
		t.Errorf("collected: skipped %+v, left out %+v, want b and c named, as their copies were collected (first: b@3)", sum.Skipped, sum.LeftOut)
	}
}
