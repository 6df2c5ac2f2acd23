package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestForkOfAnotherStoresStep: a step read from one store, forked through
// a workspace of another, must be refused: the fork used to be
// acknowledged, naming objects only the first store holds, and its state
// then read as not found and verify called it corrupt. A step read
// through another workspace of the same store forks as usual.
func TestForkOfAnotherStoresStep(t *testing.T) {
	ctx := context.Background()
	a, err := cairn.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bdir := t.TempDir()
	b, err := cairn.Open(ctx, bdir)
	if err != nil {
		t.Fatal(err)
	}
	sa, _ := a.Session("a")
	st := stepOf(t, sa, cairn.JSON([]byte(`{"x":"`+strings.Repeat("many words ", 20000)+`"}`)))
	if _, err := b.Fork(ctx, st, "f"); !errors.Is(err, cairn.ErrNotFound) {
		t.Errorf("fork of another store's step = %v, want ErrNotFound", err)
	}
	// The same session name and number in b, a different step.
	sb, _ := b.Session("a")
	stepOf(t, sb, cairn.JSON([]byte(`{"x":1}`)))
	if _, err := b.Fork(ctx, st, "g"); !errors.Is(err, cairn.ErrInvalid) {
		t.Errorf("fork of another store's step over a step of b = %v, want ErrInvalid", err)
	}
	if _, err := b.ReadHead(ctx, "g"); !errors.Is(err, cairn.ErrNotFound) {
		t.Errorf("head of the refused fork's session = %v, want ErrNotFound", err)
	}
	b2, err := cairn.Open(ctx, bdir)
	if err != nil {
		t.Fatal(err)
	}
	own, err := b2.ReadHead(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	f, err := b.Fork(ctx, own, "h")
	if err != nil {
		t.Fatalf("fork of a step of the same store, read through another workspace: %v", err)
	}
	if doc, err := f.JSON(ctx); err != nil || string(doc) != `{"x":1}` {
		t.Errorf("forked state = %s, %v", doc, err)
	}
}
