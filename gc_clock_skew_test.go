package cairn_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/fs"
	"github.com/cairnlog/cairn/internal/s3test"
	"github.com/cairnlog/cairn/manifest"
)

// TestGCClockSkew: two machines ran gc on one store seconds apart, the
// second's clock ahead of the first's: 12 minutes on S3 (which accepts
// requests up to 15 minutes off), 40 on a local directory (shared over
// NFS, it takes its times from a server whatever its skew). Each
// measured ages on its own clock: the second found the pin of a fork in
// flight, which the first had just seen, older than ForkPinGrace and
// fenced the live fork's slot, which then failed; on the directory it
// also found the step objects of a removed session, written a moment
// before, older than SlotFenceAge and deleted them, emptying slots a
// paused writer could fill again. Ages are now read on the store's
// clock, on which every machine agrees.
func TestGCClockSkew(t *testing.T) {
	t.Run("local", func(t *testing.T) {
		st, err := fs.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		gcClockSkew(t, st, 40*time.Minute)
	})
	for _, srv := range s3test.Servers {
		t.Run(srv.Name, func(t *testing.T) { gcClockSkew(t, openMinIOStore(t, srv.Start(t), "gc-skew"), clockSkew) })
	}
}

func gcClockSkew(t *testing.T, store cas.Store, skew time.Duration) {
	ctx := context.Background()
	wsA := cairn.OpenStore(store)
	commitN(t, wsA, "gone", "g", 1, 8)
	if _, err := wsA.Remove(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	commitN(t, wsA, "W", "W", 1, 3)

	// A fork of W@3 to F, held at its step's put: in flight, its pin
	// written.
	p := newPause(store)
	p.put = func(key string) bool { return key == manifest.StepKey("F", 3) }
	forker := cairn.OpenStore(p)
	from, err := forker.Resolve(ctx, "W@3")
	if err != nil {
		t.Fatal(err)
	}
	forked := make(chan error, 1)
	go func() {
		_, err := forker.Fork(ctx, from, "F")
		forked <- err
	}()
	waitPaused(t, p, forked)

	first := mustGC(t, wsA, cairn.GCOptions{Grace: 0})
	if first.Candidates == 0 {
		t.Fatalf("the first gc found nothing unreachable: %+v", first)
	}
	wsB := cairn.OpenStore(store)
	cairn.SetClock(wsB, func() time.Time { return time.Now().Add(skew) })
	second := mustGC(t, wsB, cairn.GCOptions{Grace: 0})
	if second.Deleted != 0 {
		t.Errorf("gc on a clock %v ahead deleted %v, written seconds before", skew, second.DeletedKeys)
	}
	if fence := manifest.StepKey("F", 3); slices.Contains(second.TombstoneKeys, fence) {
		t.Errorf("gc on a clock %v ahead took the pin of a fork in flight for a dead fork's and fenced its slot", skew)
	}
	close(p.release)
	if err := <-forked; err != nil {
		t.Errorf("the fork in flight beside gc: %v", err)
	}
	mustVerify(t, cairn.OpenStore(store))
}
