package manifest

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/cas/pack"
)

// TestIndexEntryMemory: a writer keeps its index for the whole session,
// and the index holds every blob of every object of the layout (dead
// ones too, until a merge drops them), so on a long session it is most
// of what grows in the writer's memory (issue 14, target 5): at 40,000
// steps of the windowed workload it held ~35,000 blobs, 9 MiB of live
// heap, each in a 104-byte map slot carrying the object's key and a
// second copy of the blob's id. An indexed blob must cost at most 96
// bytes of heap, the map's slack included, and read back as it was added.
func TestIndexEntryMemory(t *testing.T) {
	const objects, perObject = 200, 1000
	entries := make([][]pack.Entry, objects)
	keys := make([]string, objects)
	for o := range entries {
		keys[o] = StepKey("long", uint64(o+1))
		entries[o] = make([]pack.Entry, perObject)
		off := int64(64)
		for i := range entries[o] {
			var b [16]byte
			binary.LittleEndian.PutUint64(b[:], uint64(o))
			binary.LittleEndian.PutUint64(b[8:], uint64(i))
			e := pack.Entry{ID: cas.Sum(b[:]), Offset: off, StoredLen: 100 + int64(i%300), RawLen: 120 + int64(i%500)}
			off += e.StoredLen
			entries[o][i] = e
		}
	}
	repo := NewRepo(mem.New(), 0)
	before := heapInUse()
	ix := repo.NewIndex()
	for o, es := range entries {
		ix.Add(keys[o], es)
	}
	used := heapInUse() - before
	perBlob := float64(used) / float64(objects*perObject)
	t.Logf("%d blobs in %d objects: %d bytes of heap, %.1f a blob", objects*perObject, objects, used, perBlob)
	if perBlob > 96 {
		t.Errorf("the index costs %.1f bytes of heap a blob (%d blobs), want at most 96", perBlob, objects*perObject)
	}
	for o, es := range entries {
		for _, e := range es[:10] {
			loc, ok := ix.Locate(e.ID)
			if !ok || loc.Key != keys[o] || loc.Entry != e {
				t.Fatalf("blob %s: located at %+v (%v), added at %s %+v", e.ID.Short(), loc, ok, keys[o], e)
			}
		}
	}
	runtime.KeepAlive(ix)
}

// heapInUse returns the live heap, after collecting garbage.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestIndexLongEntries: entries whose lengths do not fit the index's
// small form read back whole, and a blob moved by a merge reads back at
// its new place.
func TestIndexLongEntries(t *testing.T) {
	ix := NewRepo(mem.New(), 0).NewIndex()
	long := pack.Entry{ID: cas.Sum([]byte("long")), Offset: 1 << 40, StoredLen: 5 << 30, RawLen: 6 << 30}
	short := pack.Entry{ID: cas.Sum([]byte("short")), Offset: 7, StoredLen: 9, RawLen: 11}
	ix.Add("a", []pack.Entry{long, short})
	for _, e := range []pack.Entry{long, short} {
		if loc, ok := ix.Locate(e.ID); !ok || loc.Key != "a" || loc.Entry != e {
			t.Errorf("blob %s: located at %+v (%v), added at a %+v", e.ID.Short(), loc, ok, e)
		}
	}
	moved := short
	moved.Offset = 100
	ix.compacted(&compaction{merged: []string{"a"}, key: "p", entries: []pack.Entry{moved}})
	if loc, ok := ix.Locate(short.ID); !ok || loc.Key != "p" || loc.Entry != moved {
		t.Errorf("merged blob: located at %+v (%v), want p %+v", loc, ok, moved)
	}
	if _, ok := ix.Locate(long.ID); ok || ix.Len() != 1 {
		t.Errorf("a dead blob is still indexed after its object's merge (%d blobs)", ix.Len())
	}
}
