package cairn_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// ForkOrigin reads the session's history from its base: a fork whose
// first step was pruned away, or a removed fork whose name was used
// again, continues no fork, whether or not gc has swept the old steps.
func TestForkOriginFollowsBase(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	p := commitSmall(t, ws, "p", 2)
	from, _ := p.Step(ctx, 2)
	if _, err := ws.Fork(ctx, from, "f"); err != nil {
		t.Fatal(err)
	}
	if o, err := ws.ForkOrigin(ctx, "f"); err != nil || o == nil || o.Session != "p" || o.Number != 2 {
		t.Fatalf("fork origin of f: %v, %v; want p@2", o, err)
	}
	commitSmall(t, ws, "f", 3)
	if _, err := ws.Prune(ctx, "f", 1); err != nil {
		t.Fatal(err)
	}
	if o, err := ws.ForkOrigin(ctx, "f"); err != nil || o != nil {
		t.Errorf("fork origin of f after its fork step was pruned: %v, %v; want none", o, err)
	}
	// A removed fork whose name is committed to again.
	if _, err := ws.Fork(ctx, from, "g"); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Remove(ctx, "g"); err != nil {
		t.Fatal(err)
	}
	commitSmall(t, ws, "g", 1)
	if o, err := ws.ForkOrigin(ctx, "g"); err != nil || o != nil {
		t.Errorf("fork origin of g, removed and committed again: %v, %v; want none", o, err)
	}
	// A fork pruned to its fork step keeps its origin.
	if _, err := ws.Fork(ctx, from, "h"); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Prune(ctx, "h", 1); err != nil {
		t.Fatal(err)
	}
	if o, err := ws.ForkOrigin(ctx, "h"); err != nil || o == nil || o.Number != 2 {
		t.Errorf("fork origin of h pruned to its fork step: %v, %v; want p@2", o, err)
	}
}

// A step below a fork's first step belongs to the session it was forked
// from: Session.Step says so, on every surface, instead of naming the
// store key that is missing.
func TestStepBelowForkSaysOrigin(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	p := commitSmall(t, ws, "p", 4)
	from, err := p.Step(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ws.Fork(ctx, from, "f")
	if err != nil {
		t.Fatal(err)
	}
	fs, _ := ws.Session("f")
	for n := uint64(1); n < f.Number; n++ {
		_, err := fs.Step(ctx, n)
		if !errors.Is(err, cairn.ErrNotFound) {
			t.Fatalf("f@%d: err = %v, want ErrNotFound", n, err)
		}
		msg := err.Error()
		noStoreWords(t, "step below a fork", msg)
		if !strings.Contains(msg, "forked from p@4") || !strings.Contains(msg, "p@"+strconv.FormatUint(n, 10)) {
			t.Errorf("f@%d: %q; want it to say f was forked from p@4 and name p@%d", n, msg, n)
		}
		if _, err := ws.Resolve(ctx, "f@"+strconv.FormatUint(n, 10)); err == nil || err.Error() != msg {
			t.Errorf("Resolve f@%d: %v; want %q", n, err, msg)
		}
	}
	// A fork of the fork shares p's steps below 4, not f's (f has none).
	if _, err := ws.Fork(ctx, f, "g"); err != nil {
		t.Fatal(err)
	}
	gs, _ := ws.Session("g")
	_, err = gs.Step(ctx, 2)
	if err == nil || !strings.Contains(err.Error(), "forked from f@4") || !strings.Contains(err.Error(), "is p@2") {
		t.Errorf("g@2: %v; want it to say g was forked from f@4 and its step 2 is p@2", err)
	}
}

// Session.Step(0) is bad input, as S@0 is: not a pruned step.
func TestStepZeroIsInvalid(t *testing.T) {
	ws := cairn.OpenStore(mem.New())
	s := commitSmall(t, ws, "s", 1)
	_, err := s.Step(context.Background(), 0)
	if !errors.Is(err, cairn.ErrInvalid) || errors.Is(err, cairn.ErrNotFound) || !strings.Contains(err.Error(), "numbered from 1") {
		t.Errorf("Step(0): %v; want ErrInvalid saying steps are numbered from 1", err)
	}
}

// Below a fork's first step, a step its parent pruned is still the
// fork's: the error says the fork's log shows it, and that the parent's
// own history starts later, so show of the parent's step is no surprise.
func TestStepBelowForkParentPruned(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	p := commitSmall(t, ws, "p", 6)
	from, _ := p.Step(ctx, 4)
	if _, err := ws.Fork(ctx, from, "f"); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Prune(ctx, "p", 2); err != nil {
		t.Fatal(err)
	}
	_, err := ws.Resolve(ctx, "f@2")
	if err == nil || !strings.Contains(err.Error(), "is p@2") || !strings.Contains(err.Error(), "p's own history now starts at step 5") {
		t.Errorf("f@2: %v; want it to name p@2 and say p's history starts at step 5", err)
	}
	var steps []string
	f, _ := ws.Session("f")
	f.Log(ctx, func(st *cairn.Step) error { steps = append(steps, st.String()); return nil })
	if len(steps) != 4 || steps[2] != "p@2" {
		t.Errorf("log of f: %v; want f@4 p@3 p@2 p@1", steps)
	}
}
