package eino

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestLostAndPrunedInCheckpointWords: a checkpoint's step that the store
// lost, or that was pruned, is said in a checkpoint's words, from
// cairn's *cairn.NotFoundError, as the other reasons are. A pruned step
// was said in cairn's words ("the session's history starts at step 3"),
// a lost one with the words cairn built as text.
func TestLostAndPrunedInCheckpointWords(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	s := New(ws)
	for _, doc := range []string{`{"a":1}`, `{"a":2}`, `{"a":3}`, `{"a":4}`} {
		if err := s.Set(ctx, "run-1", []byte(doc)); err != nil {
			t.Fatal(err)
		}
	}
	name := s.SessionName("run-1")
	if _, err := ws.Prune(ctx, name, 2); err != nil { // its history starts at step 3
		t.Fatal(err)
	}
	if err := store.Delete(ctx, manifest.StepKey(name, 3)); err != nil {
		t.Fatal(err)
	}
	fresh := New(cairn.OpenStore(store)) // ws holds step 3 in its cache
	_, _, pruned := fresh.GetStep(ctx, "run-1", 1)
	_, _, lost := fresh.GetStep(ctx, "run-1", 3)
	for _, c := range []struct {
		err  error
		want string
	}{
		{pruned, `eino store: get checkpoint "run-1" step 1: not found: pruned (its history starts at step 3)`},
		{lost, `eino store: get checkpoint "run-1" step 3: not found: the store has lost it (cairn verify lists what is missing)`},
	} {
		if c.err == nil || c.err.Error() != c.want || !errors.Is(c.err, cairn.ErrNotFound) {
			t.Errorf("%v; want %q, an ErrNotFound", c.err, c.want)
		}
	}
}
