package cairn_test

import (
	"context"
	"sync"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestLogOfOneStepFromManyGoroutines: a *Step is a value the caller
// holds; Log of the oldest step left after a prune, called on the same
// *Step from several goroutines, wrote its Truncated field in each (a
// data race under -race). The step Log yields says Truncated; the
// caller's step is left as it was read.
func TestLogOfOneStepFromManyGoroutines(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	s, _ := ws.Session("l")
	for _, doc := range []string{"1", "2", "3"} {
		stepOf(t, s, cairn.JSON([]byte(doc)))
	}
	if _, err := ws.Prune(ctx, "l", 1); err != nil {
		t.Fatal(err)
	}
	head, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var yielded []*cairn.Step
			err := head.Log(ctx, func(st *cairn.Step) error { yielded = append(yielded, st); return nil })
			if err != nil || len(yielded) != 1 || !yielded[0].Truncated || yielded[0].Number != 3 {
				t.Errorf("log of l@3 with l@1 and l@2 pruned: %v, %d steps; want l@3 alone, Truncated", err, len(yielded))
			}
			_ = head.Truncated
		}()
	}
	wg.Wait()
}
