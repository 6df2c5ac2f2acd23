package cairn_test

import (
	"context"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestVerifyReadsEachObjectAboutOnce: verify loaded an index of the
// whole layout for every step it checked, so each step cost every blob
// of every object its state may use, a number that grows with the
// history (80 s to verify a 100,000-step session, most of it filling
// maps), and, past the object cache, a read of each of those objects
// again. It keeps each object's table for the run now (View), so a step
// costs its own objects and the blobs it changed. Through a cache too
// small for the layout (about 30 objects of 4 KB a step) it read 5,874
// objects for 300 steps; about two a step now.
func TestVerifyReadsEachObjectAboutOnce(t *testing.T) {
	const n = 300
	dir := t.TempDir()
	windowSession(t, dir, n, 4000)
	ctx := context.Background()
	ws, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ws.SetCacheLimit(64 << 10)
	before := ws.Requests()
	rep, err := ws.Verify(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 0 || rep.Steps != n {
		t.Fatalf("verify: %d steps, problems %v; want %d steps, none", rep.Steps, rep.Problems, n)
	}
	if got, most := ws.Requests().Sub(before).Get, int64(4*n); got > most {
		t.Errorf("verify of %d steps made %d GETs; want at most %d", n, got, most)
	}
}
