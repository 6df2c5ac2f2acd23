package cairn_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestForkToRemovedNameHead: a fork to the name of a removed session is a
// conflict whose Head is the head readers see, 0 (as a commit's conflict
// on that name says), not the number of the slot the removal fenced: a
// client that took that number as the head and committed with it as
// --expect would only meet another conflict.
func TestForkToRemovedNameHead(t *testing.T) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	a, _ := ws.Session("a")
	b, _ := ws.Session("b")
	var from *cairn.Step
	for range 2 {
		if from, err = a.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ws.Remove(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	_, err = ws.Fork(ctx, from, "b")
	var ce *cairn.ConflictError
	if !errors.As(err, &ce) || ce.Head != 0 {
		t.Fatalf("fork a@2 to removed b: %v (%+v); want a conflict with Head 0", err, ce)
	}
	_, err = b.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{Expect: cairn.ExpectHead(ce.Head)})
	if err != nil {
		t.Fatalf("commit to b expecting the head the fork's conflict named (%d): %v", ce.Head, err)
	}
}
