package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// A session removed and then committed to again logs from its new
// beginning: the removed session's history is not called pruned.
func TestLogAfterRemoveIsNotPruned(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	commitSmall(t, ws, "p", 3)
	if _, err := ws.Remove(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	s := commitSmall(t, ws, "p", 2)
	var got []string
	var truncated bool
	if err := s.Log(ctx, func(st *cairn.Step) error {
		got = append(got, st.String())
		truncated = truncated || st.Truncated
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || truncated {
		t.Errorf("log after remove and two commits: %v, truncated %v; want the two new steps, not truncated", got, truncated)
	}
	// A prune after that is still a prune.
	commitSmall(t, ws, "p", 2)
	if _, err := ws.Prune(ctx, "p", 1); err != nil {
		t.Fatal(err)
	}
	truncated = false
	s.Log(ctx, func(st *cairn.Step) error { truncated = truncated || st.Truncated; return nil })
	if !truncated {
		t.Errorf("log after a prune: not marked truncated")
	}
}

// A step of a removed session whose name was committed to again is
// still the removed session's: it says so, and that the name lives on.
func TestStepOfRemovedSessionCommittedAgain(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	commitSmall(t, ws, "p", 3)
	if _, err := ws.Remove(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	_, err := ws.Resolve(ctx, "p@2")
	if !errors.Is(err, cairn.ErrRemoved) || strings.Contains(err.Error(), "again") {
		t.Errorf("p@2 of a removed session: %v; want ErrRemoved", err)
	}
	commitSmall(t, ws, "p", 1)
	_, err = ws.Resolve(ctx, "p@2")
	if !errors.Is(err, cairn.ErrRemoved) || !strings.Contains(err.Error(), "committed to again") || !strings.Contains(err.Error(), "starts at step 5") {
		t.Errorf("p@2 after the name was committed to again: %v; want ErrRemoved saying p lives on from step 5", err)
	}
}
