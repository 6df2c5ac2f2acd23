package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
)

// TestGCConcurrentFS runs commits, forks, prunes and removals beside
// back-to-back GC runs with no grace period on a local store.
func TestGCConcurrentFS(t *testing.T) {
	dir := t.TempDir()
	testGCConcurrent(t, func() *cairn.Workspace {
		ws, err := cairn.Open(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		return ws
	}, 40)
}

// acked records every acknowledged step and the state it holds.
type acked struct {
	mu     sync.Mutex
	states map[string][]byte // "s@n" -> state
	steps  []string
}

func (a *acked) add(st *cairn.Step, state []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.states[st.String()] = state
	a.steps = append(a.steps, st.String())
}

func (a *acked) pick(r *rand.Rand) (string, []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.steps) == 0 {
		return "", nil
	}
	ref := a.steps[r.IntN(len(a.steps))]
	return ref, a.states[ref]
}

// testGCConcurrent: writers commit to their own sessions; a forker forks
// acknowledged steps and commits to the forks; a churner makes sessions,
// forks them, removes the originals (so forks share a removed past) and
// prunes the writers' sessions; GC runs back to back with grace 0 all the
// while, each actor on its own Workspace (its own cache, as a separate
// process would be). Afterwards every session verifies clean and every
// acknowledged step not pruned or removed reads back exactly.
func testGCConcurrent(t *testing.T, open func() *cairn.Workspace, steps int) {
	ctx := context.Background()
	a := &acked{states: map[string][]byte{}}
	removed := map[string]bool{}
	var removedMu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	fail := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	const writers = 3
	var writing atomic.Int32
	writing.Store(writers)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer writing.Add(-1)
			ws := open()
			name := fmt.Sprintf("w%d", i)
			s, _ := ws.Session(name)
			for n := 1; n <= steps; n++ {
				state := gcState(name, n)
				st, err := s.Commit(ctx, cairn.JSON(state), cairn.CommitOptions{})
				if err != nil {
					fail(fmt.Errorf("commit %s step %d: %w", name, n, err))
					return
				}
				a.add(st, state)
			}
		}()
	}
	// Forker.
	wg.Add(1)
	go func() {
		defer wg.Done()
		ws := open()
		r := rand.New(rand.NewPCG(7, 8))
		for k := 0; writing.Load() > 0; k++ {
			ref, state := a.pick(r)
			if ref == "" {
				time.Sleep(time.Millisecond)
				continue
			}
			from, err := ws.Resolve(ctx, ref)
			if err != nil {
				continue // pruned meanwhile
			}
			name := fmt.Sprintf("f%d", k)
			st, err := ws.Fork(ctx, from, name)
			if errors.Is(err, cairn.ErrNotFound) {
				continue // pruned since it was resolved: a fork never builds on pruned history
			}
			if err != nil {
				fail(fmt.Errorf("fork %s to %s: %w", ref, name, err))
				return
			}
			a.add(st, state)
			s, _ := ws.Session(name)
			for j := 1; j <= 3; j++ {
				state := gcState(name, j)
				st, err := s.Commit(ctx, cairn.JSON(state), cairn.CommitOptions{})
				if err != nil {
					fail(fmt.Errorf("commit to fork %s: %w", name, err))
					return
				}
				a.add(st, state)
			}
		}
	}()
	// Churner: garbage and forks of removed sessions; prunes.
	wg.Add(1)
	go func() {
		defer wg.Done()
		ws := open()
		for k := 0; writing.Load() > 0; k++ {
			tmp, fork := fmt.Sprintf("tmp%d", k), fmt.Sprintf("tf%d", k)
			s, _ := ws.Session(tmp)
			var at3 *cairn.Step
			for n := 1; n <= 10; n++ {
				st, err := s.Commit(ctx, cairn.JSON(gcState(tmp, n)), cairn.CommitOptions{})
				if err != nil {
					fail(fmt.Errorf("commit %s: %w", tmp, err))
					return
				}
				if n == 3 {
					at3 = st
				}
			}
			st, err := ws.Fork(ctx, at3, fork)
			if err != nil {
				fail(fmt.Errorf("fork %s: %w", fork, err))
				return
			}
			a.add(st, gcState(tmp, 3))
			if _, err := ws.Remove(ctx, tmp); err != nil {
				fail(err)
				return
			}
			removedMu.Lock()
			removed[tmp] = true
			removedMu.Unlock()
			f, _ := ws.Session(fork)
			for n := 4; n <= 6; n++ {
				state := gcState(fork, n)
				st, err := f.Commit(ctx, cairn.JSON(state), cairn.CommitOptions{})
				if err != nil {
					fail(fmt.Errorf("commit %s after its origin was removed: %w", fork, err))
					return
				}
				a.add(st, state)
			}
			if k%3 == 2 {
				// Pruning is safe beside the session's own writer.
				if _, err := ws.Prune(ctx, fmt.Sprintf("w%d", k%writers), 5); err != nil && k > 10 {
					fail(err)
					return
				}
			}
		}
	}()
	// GC, back to back.
	var runs int
	var reclaimed int64
	var gcTime time.Duration
	gcDone := make(chan struct{})
	go func() {
		defer close(gcDone)
		ws := open()
		for writing.Load() > 0 {
			rep, err := ws.GC(ctx, cairn.GCOptions{Grace: 0, Now: slotsAged})
			if err != nil {
				fail(fmt.Errorf("gc run %d: %w", runs+1, err))
				return
			}
			runs++
			reclaimed += rep.DeletedBytes
			gcTime += rep.Duration
		}
	}()
	wg.Wait()
	<-gcDone
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	ws := open()
	var last *cairn.GCReport
	for i := 0; i < 2; i++ {
		last = mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
		reclaimed += last.DeletedBytes
	}
	rep := mustVerify(t, ws)
	u, err := ws.Usage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Every acknowledged step at or above its session's base reads back.
	sort.Strings(a.steps)
	checked, pruned := 0, 0
	for _, ref := range a.steps {
		st, err := ws.Resolve(ctx, ref)
		if err != nil {
			pruned++ // only writers' sessions are pruned: checked below
			continue
		}
		got, err := st.JSON(ctx)
		if err != nil {
			t.Fatalf("read %s: %v", ref, err)
		}
		if string(got) != string(a.states[ref]) {
			t.Fatalf("%s: state differs from what was acknowledged", ref)
		}
		checked++
	}
	for i := 0; i < writers; i++ {
		name := fmt.Sprintf("w%d", i)
		head, err := ws.Resolve(ctx, name)
		if err != nil || head.Number != uint64(steps) {
			t.Fatalf("head of %s = %v, %v; want step %d", name, head, err, steps)
		}
		var n int
		if err := head.Log(ctx, func(*cairn.Step) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		pruned -= steps - n
	}
	if pruned != 0 {
		t.Fatalf("%d acknowledged steps are unreadable beyond those pruned", pruned)
	}
	for name := range removed {
		if _, err := ws.Resolve(ctx, name); err == nil {
			t.Fatalf("removed session %s still has a head", name)
		}
	}
	t.Logf("%d gc runs beside the writers (%v in gc), reclaimed %d bytes; %d acknowledged steps read back, %d sessions removed; verify: %d sessions, %d steps, %d objects, 0 problems",
		runs, gcTime.Round(time.Millisecond), reclaimed, checked, len(removed), rep.Sessions, rep.Steps, rep.Objects)
	t.Logf("final gc: %d objects (%d bytes), %d live steps, took %v; du: live %d bytes, garbage %d, logical %d, dedup %.1fx",
		last.Objects, last.Bytes, last.LiveSteps, last.Duration, u.LiveBytes, u.GarbageBytes, u.LogicalBytes, u.DedupRatio)
	if runs < 2 || reclaimed == 0 {
		t.Fatalf("only %d gc runs reclaiming %d bytes: the test did not exercise the sweep", runs, reclaimed)
	}
}
