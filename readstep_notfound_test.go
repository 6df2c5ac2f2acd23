package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestReadStepNotFoundSaysWhy: Workspace.ReadStep, the raw read that
// replay and export use, of a step whose object is not in the store is
// a *cairn.NotFoundError that says why, as Session.Step does: the
// session has no steps, the step is above its head, it was pruned or
// its session removed (and gc swept it), or the store lost it. It was a
// plain "step d@9: not found", which said neither the reason nor "not
// found" once in the words every other read uses.
func TestReadStepNotFoundSaysWhy(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	commitSmall(t, ws, "d", 6)
	if _, err := ws.Prune(ctx, "d", 3); err != nil { // d keeps 3 steps: its history starts at step 4
		t.Fatal(err)
	}
	commitSmall(t, ws, "r", 2)
	if _, err := ws.Remove(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	a := commitSmall(t, ws, "a", 4)
	a3, err := a.Step(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Fork(ctx, a3, "b"); err != nil { // b@2 is a@2, in b's history
		t.Fatal(err)
	}
	// gc's sweep of the pruned d@1 and the removed r@1; d@5 lost.
	for _, k := range []string{manifest.StepKey("d", 1), manifest.StepKey("r", 1), manifest.StepKey("d", 5)} {
		if err := store.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	ws = cairn.OpenStore(store) // not the steps cached by the commits
	for _, c := range []struct {
		session string
		n       uint64
		want    cairn.NotFoundError // compared by Session, Step, Why, Head, Start
		words   string
	}{
		{"nosuch", 3, cairn.NotFoundError{Session: "nosuch", Step: 3, Why: cairn.NotFoundNoSteps}, "step nosuch@3 not found: session nosuch has no steps"},
		{"d", 9, cairn.NotFoundError{Session: "d", Step: 9, Why: cairn.NotFoundPastHead, Head: 6}, "step d@9 not found: the session's head is step 6"},
		{"d", 1, cairn.NotFoundError{Session: "d", Step: 1, Why: cairn.NotFoundPruned, Start: 4}, "step d@1 not found: pruned (the session's history starts at step 4)"},
		{"d", 5, cairn.NotFoundError{Session: "d", Step: 5, Why: cairn.NotFoundLost}, "step d@5 not found: the store has lost it (cairn verify lists what is missing)"},
		{"r", 9, cairn.NotFoundError{Session: "r", Step: 9, Why: cairn.NotFoundRemoved}, "step r@9 not found: the session was removed"},
		{"r", 1, cairn.NotFoundError{Session: "r", Step: 1, Why: cairn.NotFoundRemoved},
			"step r@1 not found: the session was removed; if a session was forked from r above step 1, its history still holds this step, as its step 1 (cairn log FORK lists it)"},
		// b's own objects start at its first step: below it, the step
		// is a@2's, which ReadStep("a", 2) reads. Not lost: no reason.
		{"b", 2, cairn.NotFoundError{Session: "b", Step: 2}, "step b@2 not found"},
	} {
		_, err := ws.ReadStep(ctx, c.session, c.n)
		var nf *cairn.NotFoundError
		if !errors.As(err, &nf) {
			t.Errorf("ReadStep %s@%d: %v; want a *cairn.NotFoundError", c.session, c.n, err)
			continue
		}
		if nf.Session != c.want.Session || nf.Step != c.want.Step || nf.Why != c.want.Why || nf.Head != c.want.Head || nf.Start != c.want.Start {
			t.Errorf("ReadStep %s@%d: %+v; want %+v", c.session, c.n, *nf, c.want)
		}
		if err.Error() != c.words {
			t.Errorf("ReadStep %s@%d: %q; want %q", c.session, c.n, err, c.words)
		}
		if !errors.Is(err, cairn.ErrNotFound) {
			t.Errorf("ReadStep %s@%d: %v; want it to match ErrNotFound", c.session, c.n, err)
		}
	}
	// A step that is there costs no more than it did, and reads.
	if st, err := ws.ReadStep(ctx, "d", 6); err != nil || st.Number != 6 {
		t.Errorf("ReadStep d@6: %v, %v", st, err)
	}
}

// listRefused is a store whose listings fail: an outage, or a store
// whose steps cannot be listed.
type listRefused struct{ *mem.Store }

func (listRefused) List(context.Context, string, string, func(cas.Info) error) error {
	return errors.New("the listing was refused")
}

// TestReadStepMissingWhenListingFails: a step whose object is missing,
// in a session whose steps cannot be listed, is not said "not found":
// whether it was ever written is not known, and the listing's failure is
// what is wrong. ReadStep said "step d@2 not found", hiding it.
func TestReadStepMissingWhenListingFails(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	commitSmall(t, cairn.OpenStore(store), "d", 3)
	if err := store.Delete(ctx, manifest.StepKey("d", 2)); err != nil {
		t.Fatal(err)
	}
	_, err := cairn.OpenStore(listRefused{store}).ReadStep(ctx, "d", 2)
	if err == nil || errors.Is(err, cairn.ErrNotFound) || !strings.Contains(err.Error(), "the listing was refused") {
		t.Fatalf("ReadStep d@2 of a store that cannot list: %v; want the listing's error, not ErrNotFound", err)
	}
}
