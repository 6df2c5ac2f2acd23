package cairn_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// Plain concurrent races (no pause) that failed before forks to one name
// went one at a time and a losing fork took its base back; they use the
// harness of race_plain_test.go. Run with HUNT_COUNT=1 to count the
// failed rounds instead of stopping after the first few.

// TestRacePlainForksOfDifferentBases (a defect a race hunt found, fixed since; kept as its regression test): four forks to one new name f, of
// s@5 and s@6 (s pruned to base 5) and of o@3 and o@8 (o whole).
func TestRacePlainForksOfDifferentBases(t *testing.T) {
	setup := func(t *testing.T, ws *cairn.Workspace, round int) {
		commitN(t, ws, fmt.Sprintf("s%d", round), "s", 1, 6)
		if _, err := ws.Prune(context.Background(), fmt.Sprintf("s%d", round), 2); err != nil {
			t.Fatal(err)
		}
		commitN(t, ws, fmt.Sprintf("o%d", round), "o", 1, 8)
	}
	to := sessionName("f")
	huntRace(t, 150, setup, huntForker("fs6", sessionName("s"), 6, to), huntForker("fo3", sessionName("o"), 3, to), huntForker("fo8", sessionName("o"), 8, to), huntForker("fs5", sessionName("s"), 5, to))
}

// TestRacePlainForkBaseLowered (a defect a race hunt found, fixed since; kept as its regression test): two forks to one new name f, of s@6 (s
// pruned to base 5) and of o@3 (o whole): when the fork of s@6 wins, f's
// history must end at s@5, where s's does.
func TestRacePlainForkBaseLowered(t *testing.T) {
	setup := func(t *testing.T, ws *cairn.Workspace, round int) {
		commitN(t, ws, fmt.Sprintf("s%d", round), "s", 1, 6)
		if _, err := ws.Prune(context.Background(), fmt.Sprintf("s%d", round), 2); err != nil {
			t.Fatal(err)
		}
		commitN(t, ws, fmt.Sprintf("o%d", round), "o", 1, 3)
	}
	to := sessionName("f")
	huntCheck = func(ws *cairn.Workspace, round int) string {
		for _, e := range logOfLoose(ws, to(round)) {
			if strings.HasPrefix(e, fmt.Sprintf("s%d@4 ", round)) {
				return fmt.Sprintf("the history of %s reaches s%d@4, below s's base 5: %v", to(round), round, logOfLoose(ws, to(round)))
			}
		}
		return ""
	}
	defer func() { huntCheck = nil }()
	huntRace(t, 150, setup, huntForker("fs6", sessionName("s"), 6, to), huntForker("fo3", sessionName("o"), 3, to))
}

// TestRacePlainForkWhilePrunedOrRemoved (a defect a race hunt found, fixed since; kept as its regression test): a fork of s's head to f races
// prunes and a removal of s, a writer of s, and a writer of f.
func TestRacePlainForkWhilePrunedOrRemoved(t *testing.T) {
	name := sessionName("s")
	huntRace(t, 200, seed("s", 4), huntForker("f1", name, 0, sessionName("f")), huntPruner(name, 2, 1), huntRemover(name, 1), huntWriter("w", 2, false, name), huntWriter("wf", 2, false, sessionName("f")))
}
