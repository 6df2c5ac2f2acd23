package cairn_test

import (
	"context"
	"errors"
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

// Session.Step(0) is bad input, as S@0 is: not a pruned step.
func TestStepZeroIsInvalid(t *testing.T) {
	ws := cairn.OpenStore(mem.New())
	s := commitSmall(t, ws, "s", 1)
	_, err := s.Step(context.Background(), 0)
	if !errors.Is(err, cairn.ErrInvalid) || errors.Is(err, cairn.ErrNotFound) || !strings.Contains(err.Error(), "numbered from 1") {
		t.Errorf("Step(0): %v; want ErrInvalid saying steps are numbered from 1", err)
	}
}
