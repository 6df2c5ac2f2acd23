package cairn_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestMissingStepSaidOnce: a step at or below the head whose object the
// store lost is "not found" once, in words: it was "step d@3: not
// found: read session d, step 3: not found". The other not-found cases
// keep their one reason. Every one still matches ErrNotFound.
func TestMissingStepSaidOnce(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	commitSmall(t, ws, "d", 5)
	if err := store.Delete(ctx, manifest.StepKey("d", 3)); err != nil {
		t.Fatal(err)
	}
	ws = cairn.OpenStore(store) // with no copy of step 3 in its cache
	for _, c := range []struct{ ref, want string }{
		{"d@3", "step d@3 not found: the store has lost it (cairn verify lists what is missing)"},
		{"d@9", "step d@9 not found: the session's head is step 5"},
		{"nosuch@2", "step nosuch@2 not found: session nosuch has no steps"},
		{"nosuch", "session nosuch not found: it has no steps"},
	} {
		_, err := ws.Resolve(ctx, c.ref)
		if err == nil || err.Error() != c.want || !errors.Is(err, cairn.ErrNotFound) {
			t.Errorf("Resolve(%s): %v; want %q, an ErrNotFound", c.ref, err, c.want)
		}
	}
	s, _ := ws.Session("d")
	_, err := s.Step(ctx, 3)
	if err == nil || err.Error() != "step d@3 not found: the store has lost it (cairn verify lists what is missing)" || !errors.Is(err, cairn.ErrNotFound) {
		t.Errorf("Step(3): %v", err)
	}
}
