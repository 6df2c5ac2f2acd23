package cairn_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestSetLimitsBesideReads: a Workspace is safe for concurrent use, and
// SetLimits may lower the limits after reads (its doc says how they then
// hold). Calling it while other goroutines read and commit, or from two
// goroutines at once, wrote the workspace's and its repo's limits with no
// synchronisation: a data race (go test -race) that could tear a limit.
func TestSetLimitsBesideReads(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	defer ws.Close()
	s, _ := ws.Session("s")
	stepOf(t, s, cairn.JSON([]byte(`{"a":[1,2,3]}`)))
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				switch g {
				case 0:
					if _, err := s.Commit(ctx, cairn.JSON([]byte(fmt.Sprintf(`{"a":[%d]}`, i))), cairn.CommitOptions{}); err != nil {
						t.Errorf("commit: %v", err)
					}
				case 1:
					h, err := s.Head(ctx)
					if err != nil {
						t.Errorf("head: %v", err)
						continue
					}
					if _, err := h.JSON(ctx); err != nil {
						t.Errorf("read %s: %v", h, err)
					}
					if _, err := ws.Usage(ctx); err != nil {
						t.Errorf("usage: %v", err)
					}
				default:
					if err := ws.SetLimits(cairn.Limits{MaxDepth: 100 + i, MaxObjectBytes: 1<<30 + int64(i), MaxForkLevels: 10 + i}); err != nil {
						t.Errorf("set limits: %v", err)
					}
					if l := ws.Limits(); l.MaxDepth < 100 {
						t.Errorf("limits %+v: MaxDepth not one that was set", l)
					}
				}
			}
		}(g)
	}
	wg.Wait()
}
