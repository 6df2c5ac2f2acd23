package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
)

// pause wraps a store and stops the first Put (or Delete) whose key
// matches, until the test releases it: a writer, forker or gc process
// frozen at that instant (SIGSTOP, a paused VM, a long GC pause).
type pause struct {
	cas.Store
	put, del func(key string) bool
	// die makes the held call fail once released, never reaching the
	// store: the process was killed while it was stopped.
	die     bool
	once    sync.Once
	reached chan string
	release chan struct{}
}

func newPause(s cas.Store) *pause {
	return &pause{Store: s, reached: make(chan string, 1), release: make(chan struct{})}
}

func (p *pause) hold(key string, match func(string) bool) error {
	if match == nil || !match(key) {
		return nil
	}
	first := false
	p.once.Do(func() { first = true })
	if first {
		p.reached <- key
		<-p.release
		if p.die {
			return errors.New("killed while stopped")
		}
	}
	return nil
}

func (p *pause) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	if err := p.hold(key, p.put); err != nil {
		return err
	}
	return p.Store.Put(ctx, key, data, opts)
}

func (p *pause) Delete(ctx context.Context, key string) error {
	if err := p.hold(key, p.del); err != nil {
		return err
	}
	return p.Store.Delete(ctx, key)
}

// waitPaused waits until the paused call is reached, or fails if the
// call under test ended first.
func waitPaused(t *testing.T, p *pause, done <-chan error) string {
	t.Helper()
	select {
	case key := <-p.reached:
		return key
	case err := <-done:
		t.Fatalf("the call ended (%v) before reaching its pause point", err)
	}
	return ""
}

// gcTwice runs gc twice with no grace: enough for any object that is
// unreachable in both runs to be deleted.
func gcTwice(t *testing.T, ws *cairn.Workspace) {
	t.Helper()
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
}

// TestForkOfPrunedSessionBesideGC is issue 13 item 1: session W has 70
// steps, pruned to its last 5; a gc run has seen W@1..65 as candidates.
// A second run marks, and before it sweeps, W@68 is forked to F. The
// sweep must leave F whole: its history ends where W's does, so log,
// verify and later gc runs never walk into what W pruned.
func TestForkOfPrunedSessionBesideGC(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	commitN(t, ws, "W", "W", 1, 70)
	if _, err := ws.Prune(ctx, "W", 5); err != nil {
		t.Fatal(err)
	}
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})

	p := newPause(store)
	p.del = func(string) bool { return true } // after the mark, before the sweep
	done := make(chan error, 1)
	go func() {
		_, err := cairn.OpenStore(p).GC(ctx, cairn.GCOptions{Grace: 0, Now: slotsAged})
		done <- err
	}()
	waitPaused(t, p, done)
	forker := cairn.OpenStore(store)
	from, err := forker.Resolve(ctx, "W@68")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := forker.Fork(ctx, from, "F"); err != nil {
		t.Fatal(err)
	}
	close(p.release)
	if err := <-done; err != nil {
		t.Fatalf("the gc run beside the fork: %v", err)
	}

	fresh := cairn.OpenStore(store)
	checkState(t, fresh, "F", gcState("W", 68))
	if got := logOf(t, fresh, "F"); strings.Join(got, " ") != "F@68 W@67 W@66(truncated)" {
		t.Errorf("log of F = %v, want F@68 W@67 W@66(truncated)", got)
	}
	mustVerify(t, fresh)
	gcTwice(t, fresh)
	checkState(t, fresh, "F", gcState("W", 68))
	mustVerify(t, fresh)
}

// TestStalledCommitBesideGC is issue 13 item 2: a commit that compacts
// is stopped before it puts its step object (which carries the merged
// pack; before manifest format 5 the pack was written first, on its
// own); two gc runs pass; it resumes. Either it fails, or the step it
// acknowledges reads back and the session goes on.
func TestStalledCommitBesideGC(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	commitN(t, ws, "W", "W", 1, 32) // the parent layout now holds 32 step objects

	p := newPause(store)
	p.put = func(key string) bool { return strings.HasPrefix(key, "steps/W/00000000000000000033") }
	writer := cairn.OpenStore(p)
	s, _ := writer.Session("W")
	if _, err := s.Head(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Commit(ctx, cairn.JSON(gcState("W", 33)), cairn.CommitOptions{})
		done <- err
	}()
	waitPaused(t, p, done)
	if err := store.List(ctx, "packs/", "", func(i cas.Info) error {
		return fmt.Errorf("the commit of W@33 wrote %s before its step: a merge rides in the step object", i.Key)
	}); err != nil {
		t.Fatal(err)
	}
	gcTwice(t, cairn.OpenStore(store))
	close(p.release)
	err := <-done
	if err != nil && !errors.Is(err, cairn.ErrConflict) {
		t.Fatalf("the resumed commit failed with %v; want success or a conflict", err)
	}
	fresh := cairn.OpenStore(store)
	if err == nil {
		checkState(t, fresh, "W@33", gcState("W", 33))
		if n := inStepPacks(t, store, "W", 33); n != 1 {
			t.Fatalf("W@33's layout names %d packs in step objects, want its own", n)
		}
	}
	commitN(t, fresh, "W", "W", 34, 35)
	checkState(t, fresh, "W", gcState("W", 35))
	mustVerify(t, fresh)
}

// TestStalledCommitToRemovedSession: a commit that read the head of a
// session is stopped before its put; the session is removed and gc runs
// twice; the commit resumes. It must lose its slot (the fence gc put
// above the removed head), never acknowledge a step naming swept data.
func TestStalledCommitToRemovedSession(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	commitN(t, ws, "W", "W", 1, 5)

	p := newPause(store)
	p.put = func(key string) bool { return strings.HasPrefix(key, "steps/W/00000000000000000006") }
	s, _ := cairn.OpenStore(p).Session("W")
	if _, err := s.Head(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Commit(ctx, cairn.JSON(gcState("W", 6)), cairn.CommitOptions{})
		done <- err
	}()
	waitPaused(t, p, done)
	if _, err := ws.Remove(ctx, "W"); err != nil {
		t.Fatal(err)
	}
	gcTwice(t, cairn.OpenStore(store))
	close(p.release)
	err := <-done
	fresh := cairn.OpenStore(store)
	if err == nil {
		// Acknowledged: it must read back, whatever gc did.
		checkState(t, fresh, "W@6", gcState("W", 6))
	} else if !errors.Is(err, cairn.ErrConflict) {
		t.Fatalf("the resumed commit failed with %v; want a conflict", err)
	}
	mustVerify(t, fresh)
	gcTwice(t, fresh)
	mustVerify(t, fresh)
}

// stalledFork forks W@8 to F with the forker stopped just before it puts
// F's step; meanwhile W is pruned to its head and gc runs as gcRuns says.
// It returns the fork's result.
func stalledFork(t *testing.T, store cas.Store, gcRuns func()) error {
	t.Helper()
	return stalledForkAt(t, store, "steps/F/", false, gcRuns)
}

// stalledForkAt is stalledFork with the forker stopped at its first put
// of a key with the given prefix, and killed there if die.
func stalledForkAt(t *testing.T, store cas.Store, prefix string, die bool, gcRuns func()) error {
	t.Helper()
	ctx := context.Background()
	ws := cairn.OpenStore(store)
	commitN(t, ws, "W", "W", 1, 40)
	p := newPause(store)
	p.die = die
	p.put = func(key string) bool { return strings.HasPrefix(key, prefix) }
	forker := cairn.OpenStore(p)
	from, err := forker.Resolve(ctx, "W@8")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := forker.Fork(ctx, from, "F")
		done <- err
	}()
	waitPaused(t, p, done)
	if _, err := ws.Prune(ctx, "W", 1); err != nil {
		t.Fatal(err)
	}
	gcRuns()
	close(p.release)
	return <-done
}

// TestStalledForkOfPrunedSession is issue 13 item 2 for forks: a fork of
// W@8 stopped before its put, while W is pruned to its head and gc runs
// twice. If the fork is acknowledged, F reads back whole.
func TestStalledForkOfPrunedSession(t *testing.T) {
	store := mem.New()
	err := stalledFork(t, store, func() { gcTwice(t, cairn.OpenStore(store)) })
	fresh := cairn.OpenStore(store)
	if err == nil {
		checkState(t, fresh, "F", gcState("W", 8))
		logOf(t, fresh, "F")
	} else if !errors.Is(err, cairn.ErrConflict) {
		t.Fatalf("the resumed fork failed with %v; want success or a conflict", err)
	}
	mustVerify(t, fresh)
	gcTwice(t, fresh)
	if err == nil {
		checkState(t, fresh, "F", gcState("W", 8))
	}
	mustVerify(t, fresh)
}

// TestStalledForkFencedAfterPinExpiry: a fork stopped for longer than gc
// honours its pin loses its slot to gc's fence: it fails with a
// conflict, F reads as removed, and the store verifies clean, whether
// the forker stopped before its step's put or before it even marked its
// new session (found by the soak: a fenced name without a marker).
func TestStalledForkFencedAfterPinExpiry(t *testing.T) {
	t.Run("resumed", func(t *testing.T) { testFenceAfterPinExpiry(t, "steps/F/", false) })
	t.Run("killed-before-marker", func(t *testing.T) { testFenceAfterPinExpiry(t, "sessions/F", true) })
}

func testFenceAfterPinExpiry(t *testing.T, at string, die bool) {
	ctx := context.Background()
	store := mem.New()
	later := time.Now().Add(time.Hour)
	err := stalledForkAt(t, store, at, die, func() {
		ws := cairn.OpenStore(store)
		mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: later})
		mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: later.Add(cairn.ForkPinGrace)})
	})
	if !die && !errors.Is(err, cairn.ErrConflict) || die && err == nil {
		t.Fatalf("fork after its pin expired: %v, want it to fail", err)
	}
	fresh := cairn.OpenStore(store)
	if _, err := fresh.Resolve(ctx, "F"); !errors.Is(err, cairn.ErrNotFound) {
		t.Fatalf("head of the fenced fork: %v, want not found", err)
	}
	mustVerify(t, fresh)
}

// loseStepResponse applies the first put of a step object and then
// fails it as a lost response would.
type loseStepResponse struct {
	cas.Store
	once sync.Once
}

func (l *loseStepResponse) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	err := l.Store.Put(ctx, key, data, opts)
	lose := false
	if strings.HasPrefix(key, "steps/") && !strings.HasSuffix(key, "/head") {
		l.once.Do(func() { lose = true })
	}
	if lose && err == nil {
		return cas.Transient(errors.New("connection reset after the request was sent"))
	}
	return err
}

// TestCommitAfterLostResponse is issue 13 item 11: a commit whose step
// put may have landed says so, and the session's next commit sorts it
// out (it builds on the step that did land) instead of failing.
func TestCommitAfterLostResponse(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(&loseStepResponse{Store: store})
	s, _ := ws.Session("s")
	_, err := s.Commit(ctx, cairn.JSON(gcState("s", 1)), cairn.CommitOptions{})
	if err == nil || !strings.Contains(err.Error(), "may have been written") {
		t.Fatalf("commit whose put response was lost: %v; want an error saying the step may have been written", err)
	}
	st, err := s.Commit(ctx, cairn.JSON(gcState("s", 2)), cairn.CommitOptions{})
	if err != nil {
		t.Fatalf("the next commit: %v; want it to build on the step that landed", err)
	}
	if st.Number != 2 {
		t.Fatalf("the next commit is step %d, want 2 (step 1 landed)", st.Number)
	}
	fresh := cairn.OpenStore(store)
	checkState(t, fresh, "s@1", gcState("s", 1))
	checkState(t, fresh, "s@2", gcState("s", 2))
	mustVerify(t, fresh)
}
