package cairn_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestStepBelowForkParentRemoved: below a fork's first step, a step of a
// parent that was removed is still the fork's, and the error says the
// parent was removed. It said "p's own history now starts at step 8" of a
// removed p whose head had been 6 (the base rm sets above its tombstone),
// a history p no longer has.
func TestStepBelowForkParentRemoved(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	p := commitSmall(t, ws, "p", 6)
	from, _ := p.Step(ctx, 4)
	if _, err := ws.Fork(ctx, from, "f"); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Remove(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	_, err := ws.Resolve(ctx, "f@2")
	if err == nil || !strings.Contains(err.Error(), "is p@2") || !strings.Contains(err.Error(), "p was removed") ||
		strings.Contains(err.Error(), "history now starts") {
		t.Errorf("f@2: %v; want it to name p@2 and say p was removed", err)
	}
}

// TestStepBelowForkOfFork: below the first step of a fork of a fork, the
// step is named by the session that holds it, however many forks down.
// c, forked from b@4 where b was forked from p@3, said "its step 2 is
// b@2": b has no step 2 (its history starts at its fork step, 3), and the
// log of c shows p@2 there.
func TestStepBelowForkOfFork(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	p := commitSmall(t, ws, "p", 6)
	from, _ := p.Step(ctx, 3)
	if _, err := ws.Fork(ctx, from, "b"); err != nil {
		t.Fatal(err)
	}
	b := commitSmall(t, ws, "b", 2) // b@4, b@5
	from, _ = b.Step(ctx, 4)
	if _, err := ws.Fork(ctx, from, "c"); err != nil {
		t.Fatal(err)
	}
	_, err := ws.Resolve(ctx, "c@2")
	if err == nil || !strings.Contains(err.Error(), "forked from b@4") || !strings.Contains(err.Error(), "is p@2") {
		t.Errorf("c@2: %v; want it to say c was forked from b@4 and its step 2 is p@2", err)
	}
	_, err = ws.Resolve(ctx, "c@3")
	if err == nil || !strings.Contains(err.Error(), "is b@3") {
		t.Errorf("c@3: %v; want it to say its step 3 is b@3", err)
	}
}
