package cairn_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestCommitRacingForkToSameName: a writer finds F empty; before its
// first step's put, a fork of W@8 takes the name F. The writer's put of
// F@1 succeeds, but F's head is the fork's F@8, whose parent is W@7: F@1
// is in no history (and, W pruned to base 6, below F's base, which the
// fork set to W's). Acknowledged, it would be lost at once, and gc
// would delete it. It must be a conflict instead.
func TestCommitRacingForkToSameName(t *testing.T) {
	t.Run("pruned source", func(t *testing.T) { testCommitRacingFork(t, true) })
	t.Run("whole source", func(t *testing.T) { testCommitRacingFork(t, false) })
}

func testCommitRacingFork(t *testing.T, pruned bool) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	commitN(t, ws, "W", "W", 1, 40)
	if pruned {
		if _, err := ws.Prune(ctx, "W", 35); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := cairn.OpenStore(store).Session("F")
	if _, err := c.Head(ctx); !errors.Is(err, cairn.ErrNotFound) {
		t.Fatalf("head of F before: %v; want not found", err)
	}
	from, _ := ws.Resolve(ctx, "W@8")
	if _, err := ws.Fork(ctx, from, "F"); err != nil {
		t.Fatal(err)
	}
	st, err := c.Commit(ctx, cairn.JSON([]byte(`{"mine":1}`)), cairn.CommitOptions{})
	if !errors.Is(err, cairn.ErrConflict) {
		t.Fatalf("the writer's first step after the fork took F: %v %v; want a conflict", st, err)
	}
	// Its next commit goes on from the fork.
	if st, err := c.Commit(ctx, cairn.JSON([]byte(`{"mine":2}`)), cairn.CommitOptions{}); err != nil || st.Number != 9 {
		t.Fatalf("the writer's next commit: %v %v; want F@9", st, err)
	}
	fresh := cairn.OpenStore(store)
	if got := logOf(t, fresh, "F"); got[0] != "F@9" || got[1] != "F@8" {
		t.Errorf("log of F: %v; want F@9, then the fork F@8", got)
	}
	mustVerify(t, fresh)
}
