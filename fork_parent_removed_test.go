package cairn_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestStepBelowForkParentRemoved: below a fork's first step, a step of a
// parent that was removed is still the fork's, and the error says the
// parent was removed. It said "p's own history now starts at step 8" of a
// removed p whose head had been 6 (the base rm sets above its tombstone),
// a history p no longer has.
func TestStepBelowForkParentRemoved(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	p := commitSmall(t, ws, "p", 6)
	from, _ := p.Step(ctx, 4)
	if _, err := ws.Fork(ctx, from, "f"); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Remove(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	_, err := ws.Resolve(ctx, "f@2")
	if err == nil || !strings.Contains(err.Error(), "is p@2") || !strings.Contains(err.Error(), "p was removed") ||
		strings.Contains(err.Error(), "history now starts") {
		t.Errorf("f@2: %v; want it to name p@2 and say p was removed", err)
	}
}
