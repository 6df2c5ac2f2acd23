package cairn_test

import (
	"context"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestRacePruneLowersBaseOverSwept (a defect a race hunt found, fixed since; kept as its regression test): s has 40 steps, written long ago.
// Prune B (keep 21: base 20) reads s's head and base and is slow to put
// the base marker, for milliseconds, far below HeadTrust. Prune A (keep
// 2: base 39) is acknowledged; two gc runs delete what only steps below
// 39 needed. B then puts base 20 and is acknowledged: s's history starts
// at s@20 again, whose data gc deleted.
func TestRacePruneLowersBaseOverSwept(t *testing.T) {
	ctx := context.Background()
	raw := mem.New()
	ws := cairn.OpenStore(raw)
	commitN(t, ws, "s", "s", 1, 40)
	p := newPause(raw)
	p.put = func(key string) bool { return key == manifest.BaseKey("s") }
	slow := make(chan error, 1)
	go func() {
		_, err := cairn.OpenStore(p).Prune(ctx, "s", 21)
		slow <- err
	}()
	waitPaused(t, p, slow)
	if res, err := cairn.OpenStore(raw).Prune(ctx, "s", 2); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("prune A: %+v", *res)
	}
	for range 2 { // the steps were written an hour ago
		rep, err := ws.GC(ctx, cairn.GCOptions{Grace: 0, Now: time.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("gc deleted %d", rep.Deleted)
	}
	close(p.release)
	t.Logf("prune B: %v", <-slow)
	fresh := cairn.OpenStore(raw)
	h, _ := fresh.Resolve(ctx, "s")
	if _, err := h.JSON(ctx); err != nil {
		t.Errorf("head: %v", err)
	}
	t.Logf("log: %v", logOfLoose(fresh, "s"))
	mustVerify(t, fresh)
}
