package eino

import (
	"context"
	"testing"
)

// TestDeleteTwiceWritesOneTombstone: deleting a checkpoint that is already
// deleted does nothing, as deleting one never saved does; a caller that
// deletes on every finished run does not grow the session by a step each
// time.
func TestDeleteTwiceWritesOneTombstone(t *testing.T) {
	ctx := context.Background()
	s := memStore(t)
	if err := s.Set(ctx, "run-9", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := s.Delete(ctx, "run-9"); err != nil {
			t.Fatal(err)
		}
	}
	steps, err := s.Steps(ctx, "run-9")
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 {
		t.Fatalf("%d steps after a Set and three Deletes, want 2 (the checkpoint, one deletion)", len(steps))
	}
	if _, ok, err := s.Get(ctx, "run-9"); ok || err != nil {
		t.Fatalf("Get after Delete: ok=%v err=%v", ok, err)
	}
}
