package cairn_test

import (
	"context"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// A fork of a step read in another fork's history (b@2, which is a@2,
// with a removed) pins that step's chain down to b's base, not a's: a
// forker paused before its put while b is removed too and gc runs twice
// lands on a@2 and a@1 still there, and its history reads and verifies.
func TestForkOfForkHistoryPinned(t *testing.T) {
	ctx := context.Background()
	raw := mem.New()
	ws := cairn.OpenStore(raw)
	forkedAt(t, ws, "a", 5, 3, "b")
	if _, err := ws.Remove(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	b, _ := ws.Session("b")
	from, err := b.Step(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	p := newPause(raw)
	p.put = func(key string) bool { return key == manifest.StepKey("c", 2) }
	forked := make(chan error, 1)
	go func() {
		_, err := cairn.OpenStore(p).Fork(ctx, from, "c")
		forked <- err
	}()
	waitPaused(t, p, forked) // pinned, checked, about to put c@2
	if _, err := ws.Remove(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
	if rep := mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged}); rep.Deleted == 0 {
		t.Fatalf("gc deleted nothing of the removed a and b: %+v", rep)
	}
	close(p.release)
	if err := <-forked; err != nil {
		t.Fatalf("the paused fork: %v", err)
	}
	fresh := cairn.OpenStore(raw)
	st, err := fresh.Resolve(ctx, "c@1")
	if err != nil || st.String() != "a@1" {
		t.Fatalf("c@1 after the paused fork landed: %v, %v; want a@1", st, err)
	}
	if _, err := st.JSON(ctx); err != nil {
		t.Fatalf("state of c@1: %v", err)
	}
	mustVerify(t, fresh)
}
