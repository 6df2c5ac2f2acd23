package manifest

import (
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/cas/pack"
)

// TestCompactedIntoMergedKey: a compaction whose pack key is one of the
// keys it merges keeps its blobs located there. The compact index entries
// freed that key's object number after moving the blobs into it, so the
// next object added took the number and the blobs were located in it.
// Commit cannot reach it on a sound store (the pack key is created with
// IfAbsent), but the index must not depend on that.
func TestCompactedIntoMergedKey(t *testing.T) {
	ix := NewRepo(mem.New(), 0).NewIndex()
	e := pack.Entry{ID: cas.Sum([]byte("x")), Offset: 1, StoredLen: 2, RawLen: 3}
	ix.Add("a", []pack.Entry{e})
	ix.compacted(&compaction{merged: []string{"a"}, key: "a", entries: []pack.Entry{e}})
	ix.Add("b", []pack.Entry{{ID: cas.Sum([]byte("y")), Offset: 1, StoredLen: 1, RawLen: 1}})
	if loc, ok := ix.Locate(e.ID); !ok || loc.Key != "a" {
		t.Fatalf("blob merged into its own key located at %q (%v), want a", loc.Key, ok)
	}
}
