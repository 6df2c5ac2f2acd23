package manifest

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest/tree"
)

// TestReadTablesFollowCacheLimit: what reads learn of the objects' blobs
// (the tables and hints a View reads through) was bounded at 16 MiB and
// 2^17 hints whatever the cache limit, so a reader who set a small limit
// to keep its memory small (an export) still kept some 26 MiB of them.
// They follow the limit: reading every step of a session through a
// small cache keeps them within it, and the state still reads right.
func TestReadTablesFollowCacheLimit(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	const n, limit = 200, 16 << 10
	commitItems(t, NewRepo(store, 0), n, "x")
	r := NewRepo(store, 0)
	r.SetCacheLimit(limit)
	var most, hints int64
	for i := uint64(1); i <= n; i++ {
		st, err := r.ReadStep(ctx, "s", i)
		if err != nil {
			t.Fatal(err)
		}
		v, err := r.View(ctx, st.Layout)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := (&tree.Reader{Src: v, Limits: tree.DefaultLimits}).JSON(ctx, st.Root)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(string(doc), `"x`); got != int(i) {
			t.Fatalf("state of step %d holds %d items, want %d", i, got, i)
		}
		b, h := readKept(r.reads)
		most, hints = max(most, b), max(hints, h)
	}
	t.Logf("cache limit %d bytes: tables up to %d bytes, up to %d hints", limit, most, hints)
	if most > limit {
		t.Errorf("with a cache limit of %d bytes the read tables took %d bytes; want at most the limit", limit, most)
	}
	if maxHints := int64(limit / hintBytes); hints > maxHints {
		t.Errorf("with a cache limit of %d bytes the reads kept %d hints; want at most %d", limit, hints, maxHints)
	}
}

// TestReadBoundsOfTheDefaultLimit: the default cache limit keeps the
// bounds the tables and hints had before they followed it.
func TestReadBoundsOfTheDefaultLimit(t *testing.T) {
	tables, hints := readBounds(defaultCacheBytes)
	if tables != 16<<20 || hints != 1<<17 {
		t.Errorf("bounds of the default limit: %d bytes of tables, %d hints; want 16 MiB and 2^17", tables, hints)
	}
	for _, limit := range []int64{1, 4 << 10, 1 << 20, 4 << 20, 1 << 30} {
		if tables, _ := readBounds(limit); tables > max(limit, limit/readTableShare) || tables < min(limit, minReadTables) {
			t.Errorf("limit %d: tables bounded at %d bytes", limit, tables)
		}
	}
}

// readKept returns what ri keeps: the bytes of its tables and the
// number of its hints.
func readKept(ri *readIndex) (int64, int64) {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	return ri.tables.Cost(), int64(len(ri.hints))
}
