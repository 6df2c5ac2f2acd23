package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestFirstStepBesideForkInFlight: a fork of src@5 to the new name n
// finds n empty and is slow to put its step n@5; meanwhile a writer
// commits n@1 and n@2. Both were acknowledged, and the fork's n@5 then
// became n's head: the writer's steps were in no history, two writers
// extending one session unnoticed (2 of 300 plain concurrent races ended
// so on a local store, TestForkAndFirstStepsRace). The first step now
// waits for the fork's pin to go, then finds the fork's step above its
// own: the conflict, and its next commit goes on from the fork.
func TestFirstStepBesideForkInFlight(t *testing.T) {
	ctx := context.Background()
	raw := mem.New()
	ws := cairn.OpenStore(raw)
	commitN(t, ws, "src", "s", 1, 5)
	from, err := ws.Resolve(ctx, "src@5")
	if err != nil {
		t.Fatal(err)
	}
	p := newPause(raw)
	p.put = func(key string) bool { return key == manifest.StepKey("n", 5) }
	forked := make(chan error, 1)
	go func() {
		_, err := cairn.OpenStore(p).Fork(ctx, from, "n")
		forked <- err
	}()
	waitPaused(t, p, forked) // the fork has looked at n and found it empty

	w, _ := cairn.OpenStore(raw).Session("n")
	committed := make(chan error, 1)
	go func() {
		_, err := w.Commit(ctx, cairn.JSON([]byte(`{"w":1}`)), cairn.CommitOptions{})
		committed <- err
	}()
	select {
	case err := <-committed:
		t.Fatalf("the first step was answered (%v) while a fork to its name was still in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(p.release)
	if err := <-forked; err != nil {
		t.Fatalf("fork: %v", err)
	}
	err = <-committed
	var ce *cairn.ConflictError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "a fork took the name") {
		t.Fatalf("first step beside the fork: %v; want the conflict", err)
	}
	if st, err := w.Commit(ctx, cairn.JSON([]byte(`{"w":2}`)), cairn.CommitOptions{}); err != nil || st.Number != 6 {
		t.Fatalf("the writer's next commit: %v %v; want n@6, on the fork", st, err)
	}
	fresh := cairn.OpenStore(raw)
	if got := logOf(t, fresh, "n"); got[0] != "n@6" || got[1] != "n@5" {
		t.Errorf("log of n: %v; want n@6 on the fork's n@5", got)
	}
	mustVerify(t, fresh)
}

// TestFirstStepBesideStuckFork: a fork that does not end within the wait
// leaves the first step's fate to it: ErrMaybeWritten, never an
// acknowledgement; once the fork lands, its step is the head.
func TestFirstStepBesideStuckFork(t *testing.T) {
	ctx := context.Background()
	raw := mem.New()
	ws := cairn.OpenStore(raw)
	commitN(t, ws, "src", "s", 1, 5)
	from, _ := ws.Resolve(ctx, "src@5")
	p := newPause(raw)
	p.put = func(key string) bool { return key == manifest.StepKey("n", 5) }
	forked := make(chan error, 1)
	go func() {
		_, err := cairn.OpenStore(p).Fork(ctx, from, "n")
		forked <- err
	}()
	waitPaused(t, p, forked)
	wsW := cairn.OpenStore(raw)
	cairn.SetForkWait(wsW, 50*time.Millisecond)
	w, _ := wsW.Session("n")
	_, err := w.Commit(ctx, cairn.JSON([]byte(`{"w":1}`)), cairn.CommitOptions{})
	if !errors.Is(err, cairn.ErrMaybeWritten) || !strings.Contains(err.Error(), "a fork to session n") {
		t.Fatalf("first step beside a stuck fork: %v; want ErrMaybeWritten naming the fork", err)
	}
	close(p.release)
	if err := <-forked; err != nil {
		t.Fatalf("fork: %v", err)
	}
	if h, err := w.Head(ctx); err != nil || h.Number != 5 {
		t.Fatalf("head after the fork landed: %v %v; want n@5", h, err)
	}
}

// TestForkAndFirstStepsRace races, with no pause, a fork to a new name
// against a writer's first two steps to it, many times. Whatever wins,
// an acknowledged step of the writer is in the name's history.
func TestForkAndFirstStepsRace(t *testing.T) {
	raceToNewName(t, 300, forkActor(5), writerActor(2))
}

// raceToNewName races actors to new names, rounds times (fewer with
// -short), each actor on a workspace of its own over one local store whose
// session src has 8 steps. Each returns the steps it was acknowledged:
// every one must be in the name's history, and some actor must win.
func raceToNewName(t *testing.T, rounds int, actors ...func(ws *cairn.Workspace, name string) []string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	ws, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	commitN(t, ws, "src", "s", 1, 8)
	if testing.Short() {
		rounds /= 6
	}
	for i := range rounds {
		name := fmt.Sprintf("n%d", i)
		var mu sync.Mutex
		var acked []string
		var wg sync.WaitGroup
		for _, act := range actors {
			wg.Add(1)
			go func() {
				defer wg.Done()
				own, err := cairn.Open(ctx, dir)
				if err != nil {
					t.Error(err)
					return
				}
				defer own.Close()
				got := act(own, name)
				mu.Lock()
				acked = append(acked, got...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		if len(acked) == 0 {
			t.Fatalf("round %d: no one was acknowledged", i)
		}
		history := logOf(t, ws, name)
		for _, st := range acked {
			if !slices.Contains(history, st) {
				t.Fatalf("round %d: the acknowledged step %s is not in the history %v", i, st, history)
			}
		}
	}
}

// forkActor forks src@n to the name.
func forkActor(n uint64) func(*cairn.Workspace, string) []string {
	return func(ws *cairn.Workspace, name string) []string {
		ctx := context.Background()
		from, err := ws.Resolve(ctx, fmt.Sprintf("src@%d", n))
		if err != nil {
			return nil
		}
		if st, err := ws.Fork(ctx, from, name); err == nil {
			return []string{st.String()}
		}
		return nil
	}
}

// writerActor commits steps steps to the name.
func writerActor(steps int) func(*cairn.Workspace, string) []string {
	return func(ws *cairn.Workspace, name string) []string {
		s, err := ws.Session(name)
		if err != nil {
			return nil
		}
		var acked []string
		for range steps {
			if st, err := s.Commit(context.Background(), cairn.JSON([]byte(`{"w":1}`)), cairn.CommitOptions{}); err == nil {
				acked = append(acked, st.String())
			}
		}
		return acked
	}
}

// TestTwoForksToOneName: two forks to the new name n, of src@5 and of
// src@8, each found n empty before the other's put, and both were
// acknowledged: n's head was n@8, and the fork n@5 in no history (186 of
// 300 plain concurrent races ended so on a local store). Forks to one
// name now go one at a time, holding the name's fork lock: the later one
// waits for the first to end, then finds the name taken and loses,
// having written nothing (a fork of a pruned session sets its name's
// base before its step, and a base only rises). One that does not end
// in time makes the later one give way.
func TestTwoForksToOneName(t *testing.T) {
	ctx := context.Background()
	for _, first := range []uint64{5, 8} {
		t.Run(fmt.Sprintf("n@%d first, paused at its put", first), func(t *testing.T) {
			raw := mem.New()
			ws := cairn.OpenStore(raw)
			commitN(t, ws, "src", "s", 1, 8)
			if _, err := ws.Prune(ctx, "src", 4); err != nil { // base 5: forks set n's base
				t.Fatal(err)
			}
			later := uint64(13) - first
			p := newPause(raw)
			p.put = func(key string) bool { return key == manifest.StepKey("n", first) }
			from := func(n uint64) *cairn.Step {
				st, err := ws.Resolve(ctx, fmt.Sprintf("src@%d", n))
				if err != nil {
					t.Fatal(err)
				}
				return st
			}
			firstDone := make(chan error, 1)
			go func() {
				_, err := cairn.OpenStore(p).Fork(ctx, from(first), "n")
				firstDone <- err
			}()
			waitPaused(t, p, firstDone)
			laterDone := make(chan error, 1)
			go func() {
				_, err := cairn.OpenStore(raw).Fork(ctx, from(later), "n")
				laterDone <- err
			}()
			select {
			case err := <-laterDone:
				t.Fatalf("fork of src@%d answered (%v) while the fork of src@%d, begun first, was in flight", later, err, first)
			case <-time.After(100 * time.Millisecond):
			}
			close(p.release)
			if err := <-firstDone; err != nil {
				t.Fatalf("the first fork, src@%d: %v; want it to land", first, err)
			}
			var ce *cairn.ConflictError
			if err := <-laterDone; !errors.As(err, &ce) || !strings.Contains(err.Error(), "session n was created by another writer while this fork ran") {
				t.Errorf("the later fork, src@%d: %v; want the conflict", later, err)
			}
			fresh := cairn.OpenStore(raw)
			if got := logOf(t, fresh, "n"); !strings.HasPrefix(got[0], fmt.Sprintf("n@%d", first)) {
				t.Errorf("log of n: %v; want n@%d first", got, first)
			}
			mustVerify(t, fresh)
		})
	}
	t.Run("first one stuck", func(t *testing.T) {
		raw := mem.New()
		ws := cairn.OpenStore(raw)
		commitN(t, ws, "src", "s", 1, 8)
		from, _ := ws.Resolve(ctx, "src@5")
		p := newPause(raw)
		p.put = func(key string) bool { return key == manifest.StepKey("n", 5) }
		firstDone := make(chan error, 1)
		go func() {
			_, err := cairn.OpenStore(p).Fork(ctx, from, "n")
			firstDone <- err
		}()
		waitPaused(t, p, firstDone)
		other := cairn.OpenStore(raw)
		cairn.SetForkWait(other, 50*time.Millisecond)
		from8, _ := other.Resolve(ctx, "src@8")
		_, err := other.Fork(ctx, from8, "n")
		var ce *cairn.ConflictError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "another fork to n began first and has not ended") {
			t.Errorf("fork beside one stuck: %v; want the conflict", err)
		}
		close(p.release)
		if err := <-firstDone; err != nil {
			t.Fatalf("the first fork: %v", err)
		}
		mustVerify(t, cairn.OpenStore(raw))
	})
	t.Run("race", func(t *testing.T) { raceToNewName(t, 200, forkActor(5), forkActor(8)) })
	t.Run("race with a writer", func(t *testing.T) { raceToNewName(t, 100, forkActor(3), forkActor(8), writerActor(3)) })
}
