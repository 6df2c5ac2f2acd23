package cairn_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestNotFoundErrorSaysSessionAndWhy: a session, or a step of it, that is
// not there is a *cairn.NotFoundError that names the session (and the
// step) and says why (no steps, removed, past the head, pruned), once,
// in the user's words, on every call that can meet it. It said "head of
// nosuch: not found: session has no steps", "remove s: session s: not
// found: the session was removed", "verify nosuch: not found: session
// has no steps", and only its text told which session and why.
func TestNotFoundErrorSaysSessionAndWhy(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	d := commitSmall(t, ws, "d", 5)
	if _, err := ws.Prune(ctx, "d", 3); err != nil { // d's history starts at step 3
		t.Fatal(err)
	}
	commitSmall(t, ws, "r", 2)
	if _, err := ws.Remove(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	nosuch, err := ws.Session("nosuch")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := ws.Session("r")
	call := func(f func() (*cairn.Step, error)) error { _, err := f(); return err }
	noSteps := cairn.NotFoundError{Session: "nosuch", Why: cairn.NotFoundNoSteps}
	removed := cairn.NotFoundError{Session: "r", Why: cairn.NotFoundRemoved}
	step := func(e cairn.NotFoundError, n uint64) cairn.NotFoundError { e.Step = n; return e }
	for _, c := range []struct {
		call  string
		err   error
		want  cairn.NotFoundError
		words string
	}{
		{"Head of nosuch", call(func() (*cairn.Step, error) { return nosuch.Head(ctx) }), noSteps, "session nosuch not found: it has no steps"},
		{"ReadHead nosuch", call(func() (*cairn.Step, error) { return ws.ReadHead(ctx, "nosuch") }), noSteps, "session nosuch not found: it has no steps"},
		{"Resolve nosuch", call(func() (*cairn.Step, error) { return ws.Resolve(ctx, "nosuch") }), noSteps, "session nosuch not found: it has no steps"},
		{"Resolve nosuch@3", call(func() (*cairn.Step, error) { return ws.Resolve(ctx, "nosuch@3") }), step(noSteps, 3), "step nosuch@3 not found: session nosuch has no steps"},
		{"Log nosuch", nosuch.Log(ctx, func(*cairn.Step) error { return nil }), noSteps, "session nosuch not found: it has no steps"},
		{"FirstStep nosuch", call(func() (*cairn.Step, error) { return ws.FirstStep(ctx, "nosuch") }), noSteps, "session nosuch not found: it has no steps"},
		{"ForkOrigin nosuch", func() error { _, err := ws.ForkOrigin(ctx, "nosuch"); return err }(), noSteps, "session nosuch not found: it has no steps"},
		{"Verify nosuch", func() error { _, err := ws.Verify(ctx, "nosuch"); return err }(), noSteps, "session nosuch not found: it has no steps"},
		{"Usage nosuch", func() error { _, err := ws.Usage(ctx, "nosuch"); return err }(), noSteps, "session nosuch not found: it has no steps"},
		{"Prune nosuch", func() error { _, err := ws.Prune(ctx, "nosuch", 1); return err }(), noSteps, "session nosuch not found: it has no steps"},
		{"Remove nosuch", func() error { _, err := ws.Remove(ctx, "nosuch"); return err }(), noSteps, "session nosuch not found: it has no steps"},

		{"Head of r", call(func() (*cairn.Step, error) { return r.Head(ctx) }), removed, "session r not found: it was removed"},
		{"ReadHead r", call(func() (*cairn.Step, error) { return ws.ReadHead(ctx, "r") }), removed, "session r not found: it was removed"},
		{"Step r@9", call(func() (*cairn.Step, error) { return r.Step(ctx, 9) }), step(removed, 9), "step r@9 not found: the session was removed"},
		{"Step r@1", call(func() (*cairn.Step, error) { return r.Step(ctx, 1) }), cairn.NotFoundError{Session: "r", Step: 1, Why: cairn.NotFoundRemoved, InForks: true},
			"step r@1 not found: the session was removed; if a session was forked from r above step 1, its history still holds this step, as its step 1 (cairn log FORK lists it)"},
		{"Verify r", func() error { _, err := ws.Verify(ctx, "r"); return err }(), removed, "session r not found: it was removed"},
		{"Usage r", func() error { _, err := ws.Usage(ctx, "r"); return err }(), removed, "session r not found: it was removed"},
		{"Prune r", func() error { _, err := ws.Prune(ctx, "r", 1); return err }(), removed, "session r not found: it was removed"},
		{"Remove r again", func() error { _, err := ws.Remove(ctx, "r"); return err }(), removed, "session r not found: it was removed"},

		{"Step d@9", call(func() (*cairn.Step, error) { return d.Step(ctx, 9) }), cairn.NotFoundError{Session: "d", Step: 9, Why: cairn.NotFoundPastHead, Head: 5}, "step d@9 not found: the session's head is step 5"},
		{"Step d@1", call(func() (*cairn.Step, error) { return d.Step(ctx, 1) }), cairn.NotFoundError{Session: "d", Step: 1, Why: cairn.NotFoundPruned, Start: 3}, "step d@1 not found: pruned (the session's history starts at step 3)"},
	} {
		var nf *cairn.NotFoundError
		if !errors.As(c.err, &nf) {
			t.Errorf("%s: %v; want a *cairn.NotFoundError", c.call, c.err)
			continue
		}
		if *nf != c.want {
			t.Errorf("%s: %+v; want %+v", c.call, *nf, c.want)
		}
		if c.err.Error() != c.words {
			t.Errorf("%s: %q; want %q", c.call, c.err, c.words)
		}
		if !errors.Is(c.err, cairn.ErrNotFound) || errors.Is(c.err, cairn.ErrRemoved) != (c.want.Why == cairn.NotFoundRemoved) {
			t.Errorf("%s: %v; want ErrNotFound, and ErrRemoved only if removed", c.call, c.err)
		}
	}
}
