package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestForkLevelsLimitSaysWhereItStopped: a read of a step below a chain
// of forks of forks longer than Limits.MaxForkLevels is refused naming
// the step where the walk stopped, the one it was to enter next, beside
// the step it started from and the limit to raise. Before, it named only
// the start ("the history from z12@2 down to step 1"), which the user
// had typed: nothing said where, some thousands of requests down, a
// hostile or runaway chain was. It costs about a GET and a LIST a level
// (a request each, at most, past the bound: none).
func TestForkLevelsLimitSaysWhereItStopped(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	// z0@1 ← z1@2 ← … ← z12@13: each fork is of the last one's head.
	forkChain(t, ws, 12)
	const bound = 5
	ws = cairn.OpenStore(store) // nothing cached: every level read
	if err := ws.SetLimits(cairn.Limits{MaxForkLevels: bound}); err != nil {
		t.Fatal(err)
	}
	before := ws.Requests()
	_, err := ws.Resolve(ctx, "z12@1")
	used := ws.Requests().Sub(before)
	// The walk starts below z12's own steps, at z11@11, and passes
	// five levels: z11, z10, z9, z8, z7; the next is z6@6, which z7
	// was forked from.
	want := "the history from z11@11 down to step 1, which stopped at z6@6: "
	if !errors.Is(err, cairn.ErrLimit) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "more than 5 forks of forks") {
		t.Fatalf("z12@1 over a bound of %d: %v; want ErrLimit saying %q", bound, err, want)
	}
	if hint := cairn.LimitHint(err); !strings.Contains(hint, "Limits.MaxForkLevels") {
		t.Errorf("limit hint %q; want it to name Limits.MaxForkLevels", hint)
	}
	noStoreWords(t, "a chain of forks too deep", err.Error())
	if used.Get+used.List > 2*bound+8 {
		t.Errorf("refusing after %d levels took %d GETs and %d LISTs; want about two a level", bound, used.Get, used.List)
	}
	t.Logf("%d levels, then refused: %d GETs, %d LISTs", bound, used.Get, used.List)
}
