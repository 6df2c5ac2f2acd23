package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestFirstStepListingOutOfOrder: the readers of a session's first step
// (a fork's origin, its first step, a step of its history below it) read
// one key of a listing, and a listing out of order at that key is the
// store's damage (ErrCorrupt, in words), never a wrong first step.
// Before, a fork's steps listed newest first made its newest step its
// first: ForkOrigin said the fork was no fork, FirstStep named f@4, and
// a step of its history (f@1, a's) was said lost.
func TestFirstStepListingOutOfOrder(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	commitN(t, ws, "a", "a", 1, 3)
	a, err := ws.Session("a")
	if err != nil {
		t.Fatal(err)
	}
	from, err := a.Step(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Fork(ctx, from, "f"); err != nil {
		t.Fatal(err)
	}
	commitN(t, ws, "f", "f", 3, 4)

	// Session f's steps listed newest first: out of order at the first key.
	bad := cairn.OpenStore(&brokenLister{Store: store, mode: "reversed", only: "steps/f/"})
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, cairn.ErrCorrupt) || !strings.Contains(err.Error(), "the store's listing of the steps of session f gave keys out of order") {
			t.Errorf("%s: %v; want ErrCorrupt saying the store's listing of f's steps is out of order", what, err)
			return
		}
		noStoreWords(t, what, err.Error())
	}
	origin, err := bad.ForkOrigin(ctx, "f")
	if err == nil {
		t.Errorf("fork origin of f: %+v, no error; want the listing refused", origin)
	}
	check("fork origin of f", err)
	first, err := bad.FirstStep(ctx, "f")
	if err == nil {
		t.Errorf("first step of f: %v, no error; want the listing refused", first.Number)
	}
	check("first step of f", err)
	f, err := bad.Session("f")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Step(ctx, 1)
	check("step f@1", err)

	// The store itself is whole: its own listing gives what it should.
	if origin, err := ws.ForkOrigin(ctx, "f"); err != nil || origin == nil {
		t.Errorf("fork origin of f on the whole store: %+v, %v", origin, err)
	}
}
