package cairn_test

import (
	"context"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestRacePruneUndoesRemove (a defect a race hunt found, fixed since; kept as its regression test): a prune of s (4 steps, keep 1) reads its
// head and base and is slow to put the base marker (4); a removal of s
// fences s@5 and sets the base 6, and is acknowledged. The prune then
// puts base 4, and is acknowledged too: s@4, which the removal removed,
// reads again (and gc keeps it, as live), though the removal was
// acknowledged after the prune read the session.
func TestRacePruneUndoesRemove(t *testing.T) {
	ctx := context.Background()
	raw := mem.New()
	ws := cairn.OpenStore(raw)
	commitN(t, ws, "s", "s", 1, 4)
	p := newPause(raw)
	p.put = func(key string) bool { return key == manifest.BaseKey("s") }
	pruned := make(chan error, 1)
	go func() {
		_, err := cairn.OpenStore(p).Prune(ctx, "s", 1)
		pruned <- err
	}()
	waitPaused(t, p, pruned)
	res, err := cairn.OpenStore(raw).Remove(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("remove: %+v", *res)
	close(p.release)
	if err := <-pruned; err != nil {
		t.Logf("prune: %v", err)
	}
	fresh := cairn.OpenStore(raw)
	if st, err := fresh.Resolve(ctx, "s@4"); err == nil {
		t.Errorf("s@4, removed by an acknowledged removal, reads as %s", st)
	}
	if h, err := fresh.ReadHead(ctx, "s"); err == nil {
		t.Errorf("s reads %s after its removal", h)
	}
	mustVerify(t, fresh)
}
