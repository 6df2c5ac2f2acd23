package cairn_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestRacePlainPrunePrune (a defect a race hunt found, fixed since; kept as its regression test): prunes of different lengths racing a writer:
// a step an acknowledged prune dropped must not read again (the base
// marker was overwritten by the later prune, not the higher, in 13 of
// 100 rounds before base markers only rose).
func TestRacePlainPrunePrune(t *testing.T) {
	name := sessionName("s")
	var mu sync.Mutex
	maxBase := map[int]uint64{}
	pruner := func(keep uint64) func(*cairn.Workspace, int, *hunt) {
		return func(ws *cairn.Workspace, round int, h *hunt) {
			res, err := ws.Prune(context.Background(), name(round), keep)
			if err != nil {
				return
			}
			h.note("prune: %+v", *res)
			h.dropped(res.Session, res.NewBase)
			mu.Lock()
			maxBase[round] = max(maxBase[round], res.NewBase)
			mu.Unlock()
		}
	}
	huntCheck = func(ws *cairn.Workspace, round int) string {
		mu.Lock()
		b := maxBase[round]
		mu.Unlock()
		if b > 1 {
			if st, err := ws.Resolve(context.Background(), fmt.Sprintf("%s@%d", name(round), b-1)); err == nil {
				return fmt.Sprintf("%s, below an acknowledged prune's base %d, reads", st, b)
			}
		}
		return ""
	}
	defer func() { huntCheck = nil }()
	huntRace(t, 100, seed("s", 8), pruner(1), pruner(4), pruner(2), huntWriter("w", 2, false, name))
}
