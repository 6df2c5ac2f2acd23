package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestForkOfStepRemovedMeanwhile: Fork of a step read before its session
// was removed said "not found: r@2: pruned (the session's history starts
// at step 7)", where Step and Log say the session was removed. It says so
// now (ErrRemoved), for a step read in a fork's history too (the fork
// removed); a step pruned since it was read is still said pruned.
func TestForkOfStepRemovedMeanwhile(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	commitSmall(t, ws, "r", 5)
	commitSmall(t, ws, "p", 5)
	three, err := ws.Resolve(ctx, "r@3")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Fork(ctx, three, "b"); err != nil {
		t.Fatal(err)
	}
	var read []*cairn.Step
	for _, ref := range []string{"r@2", "b@2", "p@2"} {
		st, err := ws.Resolve(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		read = append(read, st)
	}
	for _, name := range []string{"r", "b"} {
		if _, err := ws.Remove(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ws.Prune(ctx, "p", 1); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"step r@2 not found: the session was removed", "step b@2 not found: the session was removed", "pruned"} {
		_, err := ws.Fork(ctx, read[i], "to"+read[i].Session+strings.Repeat("x", i))
		removed := i < 2
		if err == nil || errors.Is(err, cairn.ErrRemoved) != removed || !errors.Is(err, cairn.ErrNotFound) || !strings.Contains(err.Error(), want) || removed && strings.Contains(err.Error(), "pruned") {
			t.Errorf("fork of %s read before: %v; want ErrNotFound saying %q", read[i], err, want)
		}
	}
}
