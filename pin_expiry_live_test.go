package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestPinExpiryBesideLiveName: a fork of W@8 to F was killed just after
// it wrote its pin. The name F was free, and a writer then created F and
// committed three steps. gc, once the pin expired, fenced the fork's
// slot F@8 with a tombstone and raised F's base above it: F, a live
// session, read as removed, its three acknowledged steps gone from it.
// A pin whose target has steps of its own is not expired by a fence.
// A forker that resumes instead of dying finds the name taken before its
// put, and fails, leaving F's steps as they are.
func TestPinExpiryBesideLiveName(t *testing.T) {
	t.Run("killed", func(t *testing.T) { testPinExpiryBesideLiveName(t, true) })
	t.Run("resumed", func(t *testing.T) { testPinExpiryBesideLiveName(t, false) })
}

func testPinExpiryBesideLiveName(t *testing.T, die bool) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	commitN(t, ws, "W", "W", 1, 10)
	p := newPause(store)
	p.die = die
	p.put = func(key string) bool { return key == "sessions/F" }
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
	commitBesidePin(t, ws, "F", 3)
	later := time.Now().Add(time.Hour)
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: later})
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: later.Add(cairn.ForkPinGrace)})
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: later.Add(2 * cairn.ForkPinGrace)})
	close(p.release)
	if err := <-done; err == nil || !die && !errors.Is(err, cairn.ErrConflict) {
		t.Errorf("the fork resumed beside F's own steps: %v; want it to fail (a conflict)", err)
	}
	fresh := cairn.OpenStore(store)
	checkState(t, fresh, "F", gcState("F", 3))
	if got := logOf(t, fresh, "F"); len(got) != 3 {
		t.Errorf("log of F: %v; want its 3 steps", got)
	}
	mustVerify(t, fresh)
}

// TestForkOfPrunedBesideNewName: a fork of W@8 (W pruned to base 6) to
// F stopped at its pin's put, while a writer created F with three steps.
// The fork, resumed, set F's base to W's (6), above F's steps, before it
// lost its put: F read as damaged, its steps hidden. It checks the name
// before it writes the base now, and leaves F as it is.
func TestForkOfPrunedBesideNewName(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	commitN(t, ws, "W", "W", 1, 40)
	if _, err := ws.Prune(ctx, "W", 35); err != nil {
		t.Fatal(err)
	}
	p := newPause(store)
	p.put = func(key string) bool { return strings.HasPrefix(key, "pins/F/") }
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
	commitN(t, ws, "F", "F", 1, 3)
	close(p.release)
	if err := <-done; !errors.Is(err, cairn.ErrConflict) {
		t.Errorf("the fork resumed beside F's own steps: %v; want a conflict", err)
	}
	fresh := cairn.OpenStore(store)
	checkState(t, fresh, "F", gcState("F", 3))
	mustVerify(t, fresh)
}

// TestForkBesideNameGrownPastItsSlot: a fork of W@8 to F stopped before
// its put while a writer created F, took it to step 100 and pruned it,
// and gc deleted F's early steps, F@8 among them. The fork's check
// before its put looked only for steps below its slot, found none, and
// filled F@8: acknowledged outside F's history. Any step of the name
// now makes the fork lose.
func TestForkBesideNameGrownPastItsSlot(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	commitN(t, ws, "W", "W", 1, 10)
	p := newPause(store)
	p.put = func(key string) bool { return key == "sessions/F" }
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
	commitBesidePin(t, ws, "F", 100)
	if _, err := ws.Prune(ctx, "F", 3); err != nil {
		t.Fatal(err)
	}
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
	if _, err := store.Stat(ctx, "steps/F/00000000000000000008"); err == nil {
		t.Fatal("gc kept F@8; the scenario needs its slot empty")
	}
	close(p.release)
	if err := <-done; !errors.Is(err, cairn.ErrConflict) {
		t.Errorf("the fork resumed beside F's own steps: %v; want a conflict", err)
	}
	fresh := cairn.OpenStore(store)
	checkState(t, fresh, "F", gcState("F", 100))
	mustVerify(t, fresh)
}

// commitBesidePin commits steps 1..to of the new session name (states
// gcState(name, n)) while a stopped fork's pin names it: the first step
// is not acknowledged, its fate left to the fork (ErrMaybeWritten, see
// TestFirstStepBesideStuckFork); it stays the head when the fork fails,
// and the next commits build on it.
func commitBesidePin(t *testing.T, ws *cairn.Workspace, name string, to int) {
	t.Helper()
	cairn.SetForkWait(ws, 20*time.Millisecond)
	s, _ := ws.Session(name)
	if _, err := s.Commit(context.Background(), cairn.JSON(gcState(name, 1)), cairn.CommitOptions{}); !errors.Is(err, cairn.ErrMaybeWritten) {
		t.Fatalf("first step of %s beside a fork's pin: %v; want ErrMaybeWritten", name, err)
	}
	commitN(t, ws, name, name, 2, to)
}
