package export_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/export"
)

// TestPreferenceForkPrunedToItsFirstStepAfterThePoint: a-alt, forked
// from a@3 and grown by one step (a-alt@4, success), pruned to that
// step, still holds its whole branch after the fork point; only its
// copy of a@3 is gone. Its branch must be paired against a's (failure)
// as it is before the prune.
func TestPreferenceForkPrunedToItsFirstStepAfterThePoint(t *testing.T) {
	ctx := context.Background()
	ws := emptyStore(t)
	agentRun(ctx, t, ws, "a", 4, "failure", nil)
	fork(ctx, t, ws, "a@3", "a-alt")
	continueRun(ctx, t, ws, "a-alt", 1, "success", nil)
	want, wantSum, _ := runLong(t, ws, export.Options{Format: export.Preference})
	if wantSum.Pairs != 1 || !strings.Contains(want, `"a-alt says 1"`) {
		t.Fatalf("before the prune: %d pairs, want 1 of a-alt's answer: %s", wantSum.Pairs, want)
	}
	if _, err := ws.Prune(ctx, "a-alt", 1); err != nil {
		t.Fatal(err)
	}
	out, sum, _ := runLong(t, ws, export.Options{Format: export.Preference})
	if sum.Pairs != 1 || out != want {
		t.Fatalf("after pruning a-alt to a-alt@4: %d pairs (skipped %+v, left out %+v), want the pair of before:\n%s\nbefore:\n%s",
			sum.Pairs, sum.Skipped, sum.LeftOut, out, want)
	}
}
