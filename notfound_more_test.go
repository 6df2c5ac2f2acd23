package cairn_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestNotFoundErrorOfEveryStep: every step that is not there to read is
// a *cairn.NotFoundError, read with errors.As and said once: a step the
// store has lost, a step of a fork's history that the store has lost, a
// fork's step below where its history starts, and a step read through
// another workspace whose store does not hold it. They were built as
// text, "step d@3: not found: the store has lost it …", which the HTTP
// API took "not found: " out of, and errors.As found nothing.
func TestNotFoundErrorOfEveryStep(t *testing.T) {
	ctx := context.Background()
	del := func(store *mem.Store, keys ...string) {
		t.Helper()
		for _, k := range keys {
			if err := store.Delete(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
	}

	// d@3 lost; x forked from a@3, a@2 lost below it.
	lost := mem.New()
	ws := cairn.OpenStore(lost)
	commitSmall(t, ws, "d", 5)
	forkedAt(t, ws, "a", 4, 3, "x")
	del(lost, manifest.StepKey("d", 3), manifest.StepKey("a", 2))

	// y forked from a removed session's name written again (r@5, r@6),
	// its base marker gone (a store of an older cairn) and r's old steps
	// swept: its history starts at r@5, its first step with no parent.
	again := mem.New()
	ws2 := cairn.OpenStore(again)
	commitSmall(t, ws2, "r", 3)
	if _, err := ws2.Remove(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	forkedAt(t, ws2, "r", 2, 6, "y")
	del(again, manifest.StepKey("r", 1), manifest.StepKey("r", 2), manifest.StepKey("r", 3), manifest.StepKey("r", 4),
		manifest.BaseKey("y"), manifest.BaseKeyAt("y", 5))

	// A step of another store, forked and diffed through ws.
	other, _ := cairn.OpenStore(mem.New()).Session("o")
	foreign := stepOf(t, other, cairn.JSON([]byte(`{"o":1}`)))
	own, err := ws.Resolve(ctx, "d@1")
	if err != nil {
		t.Fatal(err)
	}

	// Fresh workspaces: the first ones hold the steps in their caches.
	fresh, fresh2 := cairn.OpenStore(lost), cairn.OpenStore(again)
	resolve := func(ws *cairn.Workspace, ref string) error { _, err := ws.Resolve(ctx, ref); return err }
	for _, c := range []struct {
		call, session string
		step          uint64
		err           error
		words         string
	}{
		{"Resolve d@3", "d", 3, resolve(fresh, "d@3"), "step d@3 not found: the store has lost it (cairn verify lists what is missing)"},
		{"Resolve x@2", "x", 2, resolve(fresh, "x@2"), "step x@2 not found: the store has lost a step of the history of x below its step 3 (cairn verify lists what is missing)"},
		{"Resolve y@2", "y", 2, resolve(fresh2, "y@2"), "step y@2 not found: the session's history starts at step 5"},
		{"Fork o@1", "o", 1, func() error { _, err := fresh.Fork(ctx, foreign, "f"); return err }(),
			"fork o@1 to f: step o@1 not found: it was read through another workspace, and this workspace's store does not hold it"},
		{"Diff o@1", "o", 1, func() error { _, err := fresh.Diff(ctx, foreign, own); return err }(),
			"diff o@1 d@1: step o@1 not found: it was read through another workspace, and this workspace's store does not hold it"},
	} {
		var nf *cairn.NotFoundError
		switch {
		case !errors.As(c.err, &nf):
			t.Errorf("%s: %v; want a *cairn.NotFoundError", c.call, c.err)
		case nf.Session != c.session || nf.Step != c.step:
			t.Errorf("%s: %+v; want session %s, step %d", c.call, *nf, c.session, c.step)
		}
		if c.err == nil || c.err.Error() != c.words || !errors.Is(c.err, cairn.ErrNotFound) || errors.Is(c.err, cairn.ErrRemoved) {
			t.Errorf("%s: %v; want ErrNotFound saying %q", c.call, c.err, c.words)
		}
	}
}
