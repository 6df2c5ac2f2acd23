package cairn_test

import (
	"context"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestStalledPruneBesideRemoveAndGC: a prune of s (4 steps, keep 1)
// reads its head and base and stalls before its base put; s is removed,
// and two gc runs (gc's clock an hour ahead: the steps are old) sweep
// s@1..4; the prune then puts base 4. This race held: s still reads
// removed, verify is clean, and the name committed to again reads and
// verifies, before and after gc. (Without the sweep, the same stalled
// prune makes the removed s@4 read again.)
func TestStalledPruneBesideRemoveAndGC(t *testing.T) {
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
	if _, err := cairn.OpenStore(raw).Remove(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		rep, err := ws.GC(ctx, cairn.GCOptions{Grace: 0, Now: time.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("gc deleted %v", rep.DeletedKeys)
	}
	close(p.release)
	t.Logf("prune: %v", <-pruned)
	fresh := cairn.OpenStore(raw)
	if h, err := fresh.ReadHead(ctx, "s"); err == nil {
		t.Errorf("s reads %s after its removal", h)
	} else {
		t.Logf("head: %v", err)
	}
	mustVerify(t, fresh)
	st := commitN(t, fresh, "s", "x", 1, 2)
	t.Logf("committed %s; log %v", st, logOfLoose(cairn.OpenStore(raw), "s"))
	mustVerify(t, cairn.OpenStore(raw))
	gcTwice(t, cairn.OpenStore(raw))
	mustVerify(t, cairn.OpenStore(raw))
}
