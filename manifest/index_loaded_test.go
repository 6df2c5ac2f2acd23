package manifest

import (
	"context"
	"testing"

	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/cas/metered"
)

// TestIndexLoadOfALoadedLayout: a writer's next Load is of the layout its
// last commit wrote, and costs no request; once the index drops an object
// (a compaction merged it away), Load of a layout naming it adds it again
// rather than trusting the layout it recorded.
func TestIndexLoadOfALoadedLayout(t *testing.T) {
	ctx := context.Background()
	m := metered.New(mem.New())
	r := NewRepo(m, 0)
	head, ix := commitDocs(t, r, 11)
	if len(head.Layout.Packs) == 0 {
		t.Fatal("no compaction happened: the test needs a pack in the layout")
	}
	before := m.Counts()
	if err := ix.Load(ctx, head.Layout); err != nil {
		t.Fatal(err)
	}
	if got := m.Counts().Get - before.Get; got != 0 {
		t.Fatalf("Load of the layout the last commit wrote made %d GETs, want 0", got)
	}
	key := LayoutKeys(head.Layout)[0]
	ix.mu.Lock()
	ix.dropObj(key)
	ix.mu.Unlock()
	if err := ix.Load(ctx, head.Layout); err != nil {
		t.Fatal(err)
	}
	if !ix.keys[key] {
		t.Fatalf("Load did not read %s back", key)
	}
}
