package eino

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestForkToDeletedID: a checkpoint id that was deleted holds no
// checkpoint (Get says so), so it is free for Fork, as a never-saved id
// is: the fork succeeds and Get of it returns the forked checkpoint, while
// forking onto an id that holds a checkpoint is still refused, in the
// words of checkpoint ids, and matches cairn.ErrConflict.
func TestForkToDeletedID(t *testing.T) {
	ctx := context.Background()
	s := memStore(t)
	for _, v := range []string{`{"a":1}`, `{"a":2}`} {
		if err := s.Set(ctx, "run-1", []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Set(ctx, "run-2", []byte(`{"old":true}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "run-2"); err != nil {
		t.Fatal(err)
	}
	if err := s.Fork(ctx, "run-1", 1, "run-2"); err != nil {
		t.Fatalf("Fork(run-1, 1, deleted run-2) = %v, want it to succeed: a deleted id holds no checkpoint", err)
	}
	if got, ok, err := s.Get(ctx, "run-2"); err != nil || !ok || string(got) != `{"a":1}` {
		t.Fatalf("Get(run-2) after the fork = %q, %v, %v; want run-1's step 1", got, ok, err)
	}
	if got, ok, err := s.Get(ctx, "run-1"); err != nil || !ok || string(got) != `{"a":2}` {
		t.Fatalf("Get(run-1) after the fork = %q, %v, %v; want it untouched", got, ok, err)
	}

	// Likewise an id whose session was removed (cairn rm).
	if err := s.Set(ctx, "run-3", []byte(`{"old":true}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ws.Remove(ctx, s.SessionName("run-3")); err != nil {
		t.Fatal(err)
	}
	if err := s.Fork(ctx, "run-1", 2, "run-3"); err != nil {
		t.Fatalf("Fork(run-1, 2, removed run-3) = %v, want it to succeed", err)
	}
	if got, ok, err := s.Get(ctx, "run-3"); err != nil || !ok || string(got) != `{"a":2}` {
		t.Fatalf("Get(run-3) after the fork = %q, %v, %v; want run-1's step 2", got, ok, err)
	}

	// run-2 holds a checkpoint now: a second fork onto it is refused.
	err := s.Fork(ctx, "run-1", 2, "run-2")
	if !errors.Is(err, cairn.ErrConflict) {
		t.Fatalf("Fork onto run-2 holding a checkpoint = %v, want ErrConflict", err)
	}
	if msg := err.Error(); !strings.Contains(msg, `checkpoint "run-2" already exists`) {
		t.Fatalf("Fork onto run-2 holding a checkpoint: %q, want it to say checkpoint \"run-2\" already exists", msg)
	}
	if got, _, _ := s.Get(ctx, "run-2"); string(got) != `{"a":1}` {
		t.Fatalf("Get(run-2) after the refused fork = %q, want it unchanged", got)
	}
}
