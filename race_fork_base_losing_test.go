package cairn_test

import (
	"context"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestRaceLosingForkLeavesBase (a defect a race hunt found, fixed since; kept as its regression test): src is pruned (base 4). A fork of src@4
// to the new name f finds f empty and is slow to put f's base marker; a
// writer puts f@1 meanwhile. The fork then writes f's base (4), finds
// f@1 and loses; the writer's f@1 is under the base and is refused. No
// one was acknowledged, but f is left with base 4 over its only step 1:
// verify reports it corrupt, and every later commit to f fails.
func TestRaceLosingForkLeavesBase(t *testing.T) {
	ctx := context.Background()
	raw := mem.New()
	ws := cairn.OpenStore(raw)
	commitN(t, ws, "src", "s", 1, 4)
	if _, err := ws.Prune(ctx, "src", 1); err != nil {
		t.Fatal(err)
	}
	from, err := ws.Resolve(ctx, "src@4")
	if err != nil {
		t.Fatal(err)
	}
	p := newPause(raw)
	p.put = func(key string) bool { return key == manifest.BaseKey("f") }
	forked := make(chan error, 1)
	go func() {
		_, err := cairn.OpenStore(p).Fork(ctx, from, "f")
		forked <- err
	}()
	waitPaused(t, p, forked)
	w, _ := cairn.OpenStore(raw).Session("f")
	committed := make(chan error, 1)
	go func() {
		_, err := w.Commit(ctx, cairn.JSON([]byte(`{"w":1}`)), cairn.CommitOptions{})
		committed <- err
	}()
	time.Sleep(50 * time.Millisecond)
	close(p.release)
	t.Logf("fork: %v", <-forked)
	t.Logf("first commit: %v", <-committed)
	fresh := cairn.OpenStore(raw)
	s, _ := fresh.Session("f")
	if st, err := s.Commit(ctx, cairn.JSON([]byte(`{"w":2}`)), cairn.CommitOptions{}); err != nil {
		t.Errorf("a later commit to f: %v", err)
	} else {
		t.Logf("later commit: %s", st)
	}
	mustVerify(t, fresh)
}
