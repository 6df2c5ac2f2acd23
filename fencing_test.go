package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/internal/s3test"
)

// TestFencingAPIOnMinIO: 16 workspaces (each its own client and cache,
// as in separate processes; cmd/cairn's TestFencing16Processes runs real
// ones) resume one session on MinIO, then commit its next step together.
// Every round exactly one commit returns; the others return a
// *ConflictError wrapping ErrConflict that names the step, the head they
// saw and the writer holding the step. The rounds commit steps 1..10:
// the first race is over an empty session, which each writer resumed as
// "no steps yet".
func TestFencingAPIOnMinIO(t *testing.T) {
	const writers, rounds = 16, 10
	b := s3test.StartMinIO(t)
	ctx := context.Background()
	for r := 1; r <= rounds; r++ {
		sessions := make([]*cairn.Session, writers)
		for i := range sessions {
			ws := cairn.OpenStore(openMinIOStore(t, b, "fence-api"))
			sessions[i] = mustSession(t, ws, "race")
			head, err := sessions[i].Head(ctx)
			if r == 1 && errors.Is(err, cairn.ErrNotFound) {
				continue // resumed an empty session
			}
			if err != nil || head.Number != uint64(r-1) {
				t.Fatalf("round %d: writer %d resumed at %v, %v", r, i, head, err)
			}
		}
		steps := make([]*cairn.Step, writers)
		errs := make([]error, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, s := range sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				steps[i], errs[i] = s.Commit(ctx, cairn.JSON(fmt.Appendf(nil, `{"round":%d,"writer":%d}`, r, i)), cairn.CommitOptions{})
			}()
		}
		close(start)
		wg.Wait()
		var won *cairn.Step
		for i, err := range errs {
			if err == nil {
				if won != nil {
					t.Fatalf("round %d: two writers won step %d and %d", r, won.Number, steps[i].Number)
				}
				won = steps[i]
			}
		}
		if won == nil || won.Number != uint64(r) {
			t.Fatalf("round %d: winner %v; errors %v", r, won, errs)
		}
		for i, err := range errs {
			if err == nil {
				continue
			}
			var ce *cairn.ConflictError
			if !errors.Is(err, cairn.ErrConflict) || !errors.As(err, &ce) {
				t.Fatalf("round %d: writer %d: %v, want a conflict", r, i, err)
			}
			if ce.Session != "race" || ce.Number != uint64(r) || ce.Head != uint64(r-1) || ce.Holder != won.Writer || ce.Holder == "" {
				t.Fatalf("round %d: writer %d: %+v; the step is held by %q", r, i, ce, won.Writer)
			}
		}
	}
	ws := cairn.OpenStore(openMinIOStore(t, b, "fence-api"))
	checkChainTail(t, ws, "race", rounds, rounds)
	rep, err := ws.Verify(ctx, "race")
	if err != nil || len(rep.Problems) > 0 || rep.Steps != rounds {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// TestResumedEmptySessionConflicts: a writer that resumed a session with
// no steps and commits after another writer took step 1 must lose, not
// silently become step 2 on top of a state it never saw.
func TestResumedEmptySessionConflicts(t *testing.T) {
	ctx := context.Background()
	backend := mem.New()
	a := mustSession(t, cairn.OpenStore(backend), "empty")
	b := mustSession(t, cairn.OpenStore(backend), "empty")
	for _, s := range []*cairn.Session{a, b} {
		if _, err := s.Head(ctx); !errors.Is(err, cairn.ErrNotFound) {
			t.Fatalf("head of a new session: %v", err)
		}
	}
	if _, err := a.Commit(ctx, cairn.JSON([]byte(`{"by":"a"}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := b.Commit(ctx, cairn.JSON([]byte(`{"by":"b"}`)), cairn.CommitOptions{})
	var ce *cairn.ConflictError
	if !errors.As(err, &ce) || ce.Number != 1 || ce.Head != 0 {
		t.Fatalf("second writer: %v, want a conflict on step 1", err)
	}
	// Having lost, b re-reads the store and continues on top of a's step.
	st, err := b.Commit(ctx, cairn.JSON([]byte(`{"by":"b"}`)), cairn.CommitOptions{})
	if err != nil || st.Number != 2 {
		t.Fatalf("retry after the conflict: %v, %v", st, err)
	}
}

// TestResumedRemovedSessionConflicts: two writers that both saw a removed
// session start it again above the tombstone Remove left in the slot
// over its head; the second to commit loses, as with any resumed
// session, and neither reuses an old step's key.
func TestResumedRemovedSessionConflicts(t *testing.T) {
	ctx := context.Background()
	backend := mem.New()
	ws := cairn.OpenStore(backend)
	old := mustSession(t, ws, "gone")
	for i := 0; i < 3; i++ {
		if _, err := old.Commit(ctx, cairn.JSON([]byte(`{"old":true}`)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ws.Remove(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	a := mustSession(t, cairn.OpenStore(backend), "gone")
	b := mustSession(t, cairn.OpenStore(backend), "gone")
	for _, s := range []*cairn.Session{a, b} {
		if _, err := s.Head(ctx); !errors.Is(err, cairn.ErrNotFound) {
			t.Fatalf("head of a removed session: %v", err)
		}
	}
	st, err := a.Commit(ctx, cairn.JSON([]byte(`{"by":"a"}`)), cairn.CommitOptions{})
	if err != nil || st.Number != 5 {
		t.Fatalf("first writer: %v, %v; want step 5 (the tombstone holds 4)", st, err)
	}
	_, err = b.Commit(ctx, cairn.JSON([]byte(`{"by":"b"}`)), cairn.CommitOptions{})
	var ce *cairn.ConflictError
	if !errors.As(err, &ce) || ce.Number != 5 {
		t.Fatalf("second writer: %v, want a conflict on step 5", err)
	}
}
