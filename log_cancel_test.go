package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestLogStopsWhenCancelled: a Log whose context was cancelled went on
// calling fn for every step whose manifest the workspace held in memory,
// and returned nil, as if the walk had been let run; only a step it had
// to fetch from the store noticed. It now stops before the next step,
// with an error matching context.Canceled that says which log stopped.
func TestLogStopsWhenCancelled(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	s := commitSmall(t, ws, "s", 5)
	h, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Log(ctx, func(*cairn.Step) error { return nil }); err != nil { // every step read once
		t.Fatal(err)
	}
	for name, log := range map[string]func(context.Context, func(*cairn.Step) error) error{"Session.Log": s.Log, "Step.Log": h.Log} {
		c, cancel := context.WithCancel(ctx)
		n := 0
		err := log(c, func(*cairn.Step) error { n++; cancel(); return nil })
		if n != 1 || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "log s@") {
			t.Errorf("%s cancelled in its first callback: %d calls, %v; want 1 call and context.Canceled naming the log", name, n, err)
		}
	}
}
