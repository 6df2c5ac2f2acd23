package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestDiffOfAnotherStoresStep: Diff through one workspace of a step read
// from another store used to read that step's objects from this store,
// where the same session and number name another step's objects: it
// failed saying this store's objects were corrupt (or missing), though
// nothing was damaged. Like Fork, it must refuse the step, saying it was
// read through another workspace; steps of the same store read through
// another workspace diff as usual.
func TestDiffOfAnotherStoresStep(t *testing.T) {
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
	sa, _ := a.Session("s")
	sb, _ := b.Session("s")
	foreign := stepOf(t, sa, cairn.JSON([]byte(`{"x":"`+strings.Repeat("many words ", 2000)+`","y":1}`)))
	own := stepOf(t, sb, cairn.JSON([]byte(`{"x":"other words","y":2}`)))

	_, err = b.Diff(ctx, foreign, own)
	if !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), "another workspace") {
		t.Errorf("diff of another store's step = %v, want ErrInvalid saying it was read through another workspace", err)
	}
	if errors.Is(err, cairn.ErrCorrupt) {
		t.Errorf("diff of another store's step called this store corrupt: %v", err)
	}
	// Only in a: not found in b.
	only := stepOf(t, sa, cairn.JSON([]byte(`{"y":3}`)))
	if _, err := b.Diff(ctx, own, only); !errors.Is(err, cairn.ErrNotFound) {
		t.Errorf("diff with a step b does not hold = %v, want ErrNotFound", err)
	}

	b2, err := cairn.Open(ctx, bdir)
	if err != nil {
		t.Fatal(err)
	}
	sb2, _ := b2.Session("s")
	next := stepOf(t, sb2, cairn.JSON([]byte(`{"x":"other words","y":4}`)))
	ch, err := b.Diff(ctx, own, next)
	if err != nil || len(ch) != 1 || ch[0].Path != "/y" {
		t.Errorf("diff of steps of the same store read through two workspaces: %v, %v", ch, err)
	}
}
