package cairn

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestLeftHistoryPrunedSaidOnce: a fork whose source was below its
// history's base when the fork looked, but is not when the error is
// said (a fork that lost took back the base it had set), says what Fork
// found as a *NotFoundError, pruned, once. It said "not found: p@2:
// pruned (the session's history starts at step 5)", a text only.
func TestLeftHistoryPrunedSaidOnce(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	w := OpenStore(store)
	p, err := w.Session("p")
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := p.Commit(ctx, JSON([]byte(`{}`)), CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	two, err := p.Step(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Prune(ctx, "p", 1); err != nil { // p's history starts at step 5
		t.Fatal(err)
	}
	_, cause := w.repo.Fork(ctx, two.m, "p", "t", nil)
	if !errors.Is(cause, manifest.ErrPruned) {
		t.Fatalf("fork of p@2 below the base: %v; want pruned", cause)
	}
	// The base as a fork that lost leaves it: below p@2 again.
	for _, k := range []string{manifest.BaseKey("p"), manifest.BaseKeyAt("p", 5)} {
		if err := store.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	err = classify(w.leftHistory(ctx, two, cause))
	var nf *NotFoundError
	const want = "step p@2 not found: pruned (the session's history starts at step 5)"
	if !errors.As(err, &nf) || nf.Session != "p" || nf.Step != 2 || nf.Start != 5 || err.Error() != want || !errors.Is(err, ErrNotFound) {
		t.Errorf("left history: %v; want a *NotFoundError saying %q", err, want)
	}
}
