package cairn_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestRemoveFencesStaleWriters: removing a session must be noticed by
// every writer that still holds its old head. Before, Remove only raised
// the session's base, so a writer in another process (here: another
// Workspace) extended the removed session at the slot above its head,
// and a commit expecting the old head succeeded as if nothing happened.
func TestRemoveFencesStaleWriters(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	sa, _ := a.Session("s")
	for _, doc := range []string{`{"n":1}`, `{"n":2}`} {
		if _, err := sa.Commit(ctx, cairn.JSON([]byte(doc)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Remove(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if res.Head != 2 || res.Steps != 2 {
		t.Fatalf("remove: %+v", res)
	}

	// The writer holding head 2 loses its next commit.
	_, err = sa.Commit(ctx, cairn.JSON([]byte(`{"n":3}`)), cairn.CommitOptions{})
	if !errors.Is(err, cairn.ErrConflict) {
		t.Fatalf("commit of a writer holding the removed head: %v, want ErrConflict", err)
	}
	// Expecting the old head fails too, from a fresh view of the store.
	fresh, _ := b.Session("s")
	_, err = fresh.Commit(ctx, cairn.JSON([]byte(`{"n":3}`)), cairn.CommitOptions{Expect: cairn.ExpectHead(2)})
	if !errors.Is(err, cairn.ErrConflict) {
		t.Fatalf("commit expecting the removed head: %v, want ErrConflict", err)
	}
	if _, err := fresh.Head(ctx); !errors.Is(err, cairn.ErrNotFound) {
		t.Fatalf("head of a removed session: %v, want ErrNotFound", err)
	}
	// The name is free: a commit expecting no session starts it again,
	// with no history before it.
	st, err := fresh.Commit(ctx, cairn.JSON([]byte(`{"n":"new"}`)), cairn.CommitOptions{Expect: cairn.ExpectHead(0)})
	if err != nil {
		t.Fatalf("commit expecting no session after remove: %v", err)
	}
	var steps int
	if err := fresh.Log(ctx, func(*cairn.Step) error { steps++; return nil }); err != nil {
		t.Fatal(err)
	}
	if steps != 1 {
		t.Fatalf("the session started again at step %d has %d steps of history, want 1", st.Number, steps)
	}
	// The writer that lost goes on after the new start once it re-reads.
	if _, err := sa.Commit(ctx, cairn.JSON([]byte(`{"n":4}`)), cairn.CommitOptions{Expect: cairn.ExpectHead(st.Number)}); err != nil {
		t.Fatalf("commit after re-reading: %v", err)
	}
	if rep, err := b.Verify(ctx, "s"); err != nil || len(rep.Problems) > 0 {
		t.Fatalf("verify: %v %v", err, rep.Problems)
	}
}
