package export_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/export"
)

// TestPreferenceBranchPrunedUpToTheForkPoint: a, forked at a@3, pruned
// to its last step (a@4) still holds its whole continuation after the
// fork point, but its path no longer passes through a@3, so its branch
// was dropped without a word: a-alt (success) was no longer paired with
// a (failure), and nothing said so. The branch is used, its prompt taken
// from a path that holds the point.
func TestPreferenceBranchPrunedUpToTheForkPoint(t *testing.T) {
	ctx := context.Background()
	ws, _ := forkedWorkload(t)
	if _, err := ws.Prune(ctx, "a", 1); err != nil {
		t.Fatal(err)
	}
	out, sum, _ := runLong(t, ws, export.Options{Format: export.Preference})
	if sum.Pairs != 2 || !strings.Contains(out, `"answer of a"`) {
		t.Fatalf("%d pairs, want 2, a-alt's against a's among them: %s", sum.Pairs, out)
	}
	for _, o := range lines(t, out) {
		if p := asList(o["prompt"]); len(p) != 6 {
			t.Fatalf("prompt of %d messages, want the 6 up to a@3: %v", len(p), o)
		}
	}
}

// TestPreferenceBranchPrunedPastTheForkPointNoted: a, forked at a@3 and
// grown to a@5, pruned to its last step lost a@4, part of its branch
// after the fork point, so it cannot be paired; it was dropped without a
// word. It is named among the skipped.
func TestPreferenceBranchPrunedPastTheForkPointNoted(t *testing.T) {
	ctx := context.Background()
	ws, _ := forkedWorkload(t)
	continueRun(ctx, t, ws, "a", 1, "failure", nil)
	if _, err := ws.Prune(ctx, "a", 1); err != nil {
		t.Fatal(err)
	}
	out, sum, _ := runLong(t, ws, export.Options{Format: export.Preference})
	if strings.Contains(out, `"answer of a"`) {
		t.Fatalf("a's partly pruned branch was paired: %s", out)
	}
	for _, n := range sum.Skipped {
		if strings.Contains(n.Reason, "pruned") && strings.Contains(n.Reason, "fork point") && slices.Contains(n.Names, "a") {
			return
		}
	}
	t.Errorf("a's partly pruned branch is not named: skipped %+v, left out %+v", sum.Skipped, sum.LeftOut)
}
