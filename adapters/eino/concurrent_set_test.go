package eino

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestConcurrentSetsOfOneID: writers in two workspaces over one directory
// (two processes, as far as caches go) saving the same checkpoint id at
// once all succeed, each Set is one step, and Get returns one of the
// checkpoints whole.
func TestConcurrentSetsOfOneID(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var stores []*Store
	for range 2 {
		ws, err := cairn.Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.Close() })
		stores = append(stores, New(ws))
	}
	const writers, each = 4, 3
	want := map[string]bool{}
	var wg sync.WaitGroup
	for w := range writers {
		for i := range each {
			want[fmt.Sprintf(`{"w":%d,"i":%d}`, w, i)] = true
		}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := range each {
				if err := stores[w%2].Set(ctx, "shared", fmt.Appendf(nil, `{"w":%d,"i":%d}`, w, i)); err != nil {
					t.Error(err)
				}
			}
		}(w)
	}
	wg.Wait()
	steps, err := stores[0].Steps(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != writers*each {
		t.Fatalf("%d steps, want %d (one per Set)", len(steps), writers*each)
	}
	got, ok, err := stores[1].Get(ctx, "shared")
	if err != nil || !ok || !want[string(got)] {
		t.Fatalf("Get = %s, %v, %v; want one of the checkpoints set", got, ok, err)
	}
}
