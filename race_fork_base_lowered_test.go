package cairn_test

import (
	"context"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestRaceForkBaseLoweredUnderAckedFork (a defect a race hunt found, fixed since; kept as its regression test): s (70 steps) was pruned to base
// 66 long ago and gc swept s@1..65. Two forks to the new name f: the fork
// of s@68 writes f's base 66 and is slow to put f@68; the fork of o@3 (o whole,
// base 1) finds f's base is not its own and f empty, writes f's base 1
// and f@3, and waits for the fork above. The fork of s@68 lands and is
// acknowledged; the one of o@3 is hidden and loses. f's base stays 1:
// the acknowledged f@68's history runs into s@65, which gc deleted.
func TestRaceForkBaseLoweredUnderAckedFork(t *testing.T) {
	ctx := context.Background()
	raw := mem.New()
	ws := cairn.OpenStore(raw)
	commitN(t, ws, "s", "s", 1, 70)
	if _, err := ws.Prune(ctx, "s", 5); err != nil {
		t.Fatal(err)
	}
	commitN(t, ws, "o", "o", 1, 3)
	for range 2 { // an hour later: s@1..65 are swept
		rep, err := ws.GC(ctx, cairn.GCOptions{Grace: 0, Now: time.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("gc deleted %d objects", rep.Deleted)
	}
	mustVerify(t, ws)
	s68, err := ws.Resolve(ctx, "s@68")
	if err != nil {
		t.Fatal(err)
	}
	o3, err := ws.Resolve(ctx, "o@3")
	if err != nil {
		t.Fatal(err)
	}
	p := newPause(raw)
	p.put = func(key string) bool { return key == manifest.StepKey("f", 68) }
	high := make(chan error, 1)
	go func() {
		_, err := cairn.OpenStore(p).Fork(ctx, s68, "f")
		high <- err
	}()
	waitPaused(t, p, high) // f's base is 5 now, and f is empty
	low := make(chan error, 1)
	go func() {
		_, err := cairn.OpenStore(raw).Fork(ctx, o3, "f")
		low <- err
	}()
	time.Sleep(100 * time.Millisecond) // it writes f's base 1 and f@3, and waits for the fork above
	close(p.release)
	if err := <-high; err != nil {
		t.Fatalf("fork of s@68: %v; want it acknowledged", err)
	}
	t.Logf("fork of o@3: %v", <-low)
	fresh := cairn.OpenStore(raw)
	t.Logf("log of f: %v", logOfLoose(fresh, "f"))
	mustVerify(t, fresh)
}
