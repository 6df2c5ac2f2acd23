package cairn_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/internal/s3test"
	"github.com/cairnlog/cairn/manifest"
)

// TestStaleWriterPausedInCommitMinIO: the pause can come inside a commit,
// after it checked the head it held and before its step's conditional
// put (a big state's spill pack upload, a laptop's lid shut, SIGSTOP):
// B holds step 5, which it confirmed a moment ago, and begins a commit
// of a state large enough to spill; it stops at the spill pack's put
// while A takes the session to 40 and prunes it, gc SlotFenceAge later
// deletes slot 6, and B's clock moves on as far. B's step 6 must not
// land in the emptied slot below the session's base: the conflict.
func TestStaleWriterPausedInCommitMinIO(t *testing.T) {
	ctx := context.Background()
	b := s3test.StartMinIO(t)
	raw := openMinIOStore(t, b, "paused")
	wsA := cairn.OpenStore(raw)
	a := mustSession(t, wsA, "d")
	commitSlots(t, a, 1, 5)

	p := newPause(raw)
	p.put = func(key string) bool { return strings.HasPrefix(key, "packs/d/") }
	wsB := cairn.OpenStore(p)
	var mu sync.Mutex
	clock := time.Now
	cairn.SetClock(wsB, func() time.Time { mu.Lock(); defer mu.Unlock(); return clock() })
	sb := mustSession(t, wsB, "d")
	if h, err := sb.Head(ctx); err != nil || h.Number != 5 {
		t.Fatalf("B's head: %v, %v", h, err)
	}
	dir := t.TempDir()
	big := make([]byte, manifest.SpillThreshold+(4<<20))
	var x uint64 = 88172645463325252
	for i := range big { // incompressible: it spills
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		big[i] = byte(x)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	type result struct {
		st  *cairn.Step
		err error
	}
	res := make(chan result, 1)
	done := make(chan error, 1)
	go func() {
		st, err := sb.Commit(ctx, cairn.Dir(dir), cairn.CommitOptions{})
		res <- result{st, err}
		done <- err
	}()
	key := waitPaused(t, p, done)
	t.Logf("B paused at the put of %s", key)

	commitSlots(t, a, 6, 40)
	if _, err := wsA.Prune(ctx, "d", 3); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(manifest.SlotFenceAge + time.Minute)
	for range 2 {
		if _, err := wsA.GC(ctx, cairn.GCOptions{Grace: 0, Now: later}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Stat(ctx, manifest.StepKey("d", 6)); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("slot 6 after gc SlotFenceAge later: %v; want it deleted", err)
	}
	mu.Lock()
	clock = func() time.Time { return time.Now().Add(manifest.SlotFenceAge + time.Minute) }
	mu.Unlock()
	close(p.release)
	r := <-res
	if !errors.Is(r.err, cairn.ErrConflict) {
		t.Errorf("B's commit, resumed after gc emptied its slot: %v, %v; want a conflict", r.st, r.err)
	}
	if _, err := raw.Stat(ctx, manifest.StepKey("d", 6)); !errors.Is(err, cas.ErrNotFound) {
		t.Errorf("slot 6 after B's commit: %v; want it left empty (a step below the base, acknowledged, is lost)", err)
	}
	if h, err := wsA.ReadHead(ctx, "d"); err != nil || h.Number != 40 {
		t.Fatalf("head after B's commit: %v, %v; want step 40", h, err)
	}
}

// TestForkPausedAfterGCMinIO: a forker is paused inside Fork, after it
// found session x empty and before its step's put; meanwhile a writer
// creates x (its first step, beside the fork's pin, is left to the
// fork's fate: ErrMaybeWritten; another fork would wait for this one,
// which holds the name's fork lock), takes it to step 40 and prunes it,
// and gc SlotFenceAge later deletes slot 5, the one the fork wants. The
// forker, resumed with its clock as far on, must get the conflict: its
// fork step would lie below x's base, acknowledged and seen by no reader.
func TestForkPausedAfterGCMinIO(t *testing.T) {
	ctx := context.Background()
	b := s3test.StartMinIO(t)
	raw := openMinIOStore(t, b, "fork")
	wsA := cairn.OpenStore(raw)
	commitN(t, wsA, "s", "s", 1, 5)

	p := newPause(raw)
	p.put = func(key string) bool { return key == manifest.SessionKey("x") }
	wsF := cairn.OpenStore(p)
	var mu sync.Mutex
	clock := time.Now
	cairn.SetClock(wsF, func() time.Time { mu.Lock(); defer mu.Unlock(); return clock() })
	from, err := wsF.Resolve(ctx, "s@5")
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		st  *cairn.Step
		err error
	}
	res := make(chan result, 1)
	done := make(chan error, 1)
	go func() {
		st, err := wsF.Fork(ctx, from, "x")
		res <- result{st, err}
		done <- err
	}()
	t.Logf("forker paused at the put of %s", waitPaused(t, p, done))

	commitBesidePin(t, wsA, "x", 40)
	if _, err := wsA.Prune(ctx, "x", 3); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(manifest.SlotFenceAge + time.Minute)
	for range 2 {
		if _, err := wsA.GC(ctx, cairn.GCOptions{Grace: 0, Now: later}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Stat(ctx, manifest.StepKey("x", 5)); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("slot x@5 after gc SlotFenceAge later: %v; want it deleted", err)
	}
	mu.Lock()
	clock = func() time.Time { return time.Now().Add(manifest.SlotFenceAge + time.Minute) }
	mu.Unlock()
	close(p.release)
	r := <-res
	if !errors.Is(r.err, cairn.ErrConflict) {
		t.Errorf("the paused fork, resumed after gc emptied its slot: %v, %v; want a conflict", r.st, r.err)
	}
	if _, err := raw.Stat(ctx, manifest.StepKey("x", 5)); !errors.Is(err, cas.ErrNotFound) {
		t.Errorf("slot x@5 after the paused fork: %v; want it left empty", err)
	}
	if h, err := wsA.ReadHead(ctx, "x"); err != nil || h.Number != 40 {
		t.Fatalf("x's head after the paused fork: %v, %v; want step 40", h, err)
	}
}

// pauseAfterGet holds the first Get of key once it has returned, until
// the test closes release: a process stopped right after that read.
type pauseAfterGet struct {
	cas.Store
	key     string
	once    sync.Once
	reached chan struct{}
	release chan struct{}
}

func (p *pauseAfterGet) Get(ctx context.Context, key string, off, n int64) ([]byte, error) {
	b, err := p.Store.Get(ctx, key, off, n)
	if key == p.key {
		p.once.Do(func() { close(p.reached); <-p.release })
	}
	return b, err
}

// TestRemovePausedAfterGCMinIO: rm is a slot writer too (its tombstone
// goes in the slot above the head it read). Paused right after it read
// head 5 while A took the session to 40, pruned it and gc SlotFenceAge
// later emptied slot 6, it must not put its tombstone there and raise
// the base to 7 (below 38: the steps between gone, the session neither
// removed nor readable): with its clock as far on, it reads the head
// again and is the conflict of a writer that committed meanwhile.
func TestRemovePausedAfterGCMinIO(t *testing.T) {
	ctx := context.Background()
	b := s3test.StartMinIO(t)
	raw := openMinIOStore(t, b, "rm")
	wsA := cairn.OpenStore(raw)
	commitN(t, wsA, "d", "d", 1, 5)

	p := &pauseAfterGet{Store: raw, key: manifest.StepKey("d", 5), reached: make(chan struct{}), release: make(chan struct{})}
	wsR := cairn.OpenStore(p)
	var mu sync.Mutex
	clock := time.Now
	cairn.SetClock(wsR, func() time.Time { mu.Lock(); defer mu.Unlock(); return clock() })
	type result struct {
		res *cairn.PruneResult
		err error
	}
	res := make(chan result, 1)
	go func() {
		r, err := wsR.Remove(ctx, "d")
		res <- result{r, err}
	}()
	select {
	case <-p.reached:
	case r := <-res:
		t.Fatalf("rm ended (%+v, %v) before reading step 5", r.res, r.err)
	}

	commitN(t, wsA, "d", "d", 6, 40)
	if _, err := wsA.Prune(ctx, "d", 3); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(manifest.SlotFenceAge + time.Minute)
	for range 2 {
		if _, err := wsA.GC(ctx, cairn.GCOptions{Grace: 0, Now: later}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Stat(ctx, manifest.StepKey("d", 6)); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("slot 6 after gc SlotFenceAge later: %v; want it deleted", err)
	}
	mu.Lock()
	clock = func() time.Time { return time.Now().Add(manifest.SlotFenceAge + time.Minute) }
	mu.Unlock()
	close(p.release)
	r := <-res
	if !errors.Is(r.err, cairn.ErrConflict) {
		t.Errorf("rm, resumed after gc emptied slot 6: %+v, %v; want a conflict", r.res, r.err)
	}
	if _, err := raw.Stat(ctx, manifest.StepKey("d", 6)); !errors.Is(err, cas.ErrNotFound) {
		t.Errorf("slot 6 after rm: %v; want it left empty", err)
	}
	h, err := wsA.ReadHead(ctx, "d")
	if err != nil || h.Number != 40 {
		t.Fatalf("head after rm: %v, %v; want step 40", h, err)
	}
	checkState(t, wsA, "d@38", gcState("d", 38))
	if rep, err := wsA.Verify(ctx, "d"); err != nil || len(rep.Problems) > 0 {
		t.Fatalf("verify d after rm: %v, %v", rep, err)
	}
}
