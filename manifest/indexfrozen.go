package manifest

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"sort"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
)

// frozen is the part of an index that RestoreHead restored from a
// snapshot, looked up where the snapshot holds it. A fresh CLI process
// restores every blob of the head's layout (8,800 on the 2,000-file bench
// session) and then looks up a few thousand: inserting them all into the
// index's map cost it about 0.7 ms and a megabyte of fresh memory, which
// a short process pays again in page faults (issue 14, targets 3 and 7).
// Here the entries stay in the snapshot's objects, found through an
// open-addressing table of 4 bytes a slot.
//
// The frozen part only answers lookups. Anything that changes or walks
// the index's blobs other than adding new ones (a compaction, removal,
// local copies, a snapshot built from the map) first thaws it into the
// map, as RestoreHead did before; such steps are one in DefaultFanout.
type frozen struct {
	objs  []IndexObject // the restored objects, each with entries
	nums  []uint32      // the index's number of objs[i]
	start []int         // number of the first entry of objs[i] (a prefix sum)
	slots []uint32      // 0: empty; else 1 + the number of an entry
	mask  uint64
	n     int
}

// newFrozen indexes the entries of objs (numbered nums in the index).
// It fails if a blob is listed twice.
func newFrozen(objs []IndexObject, nums []uint32) (*frozen, error) {
	f := &frozen{objs: objs, nums: nums, start: make([]int, len(objs))}
	for i, o := range objs {
		f.start[i] = f.n
		f.n += len(o.Entries)
	}
	// At most half full: linear probing stays short.
	size := 1 << bits.Len(uint(2*f.n))
	f.slots = make([]uint32, size)
	f.mask = uint64(size - 1)
	g := 0
	for _, o := range objs {
		for _, e := range o.Entries {
			i := f.home(e.ID)
			for ; f.slots[i] != 0; i = (i + 1) & f.mask {
				if f.entry(int(f.slots[i]-1)).ID == e.ID {
					return nil, fmt.Errorf("%w: blob %s listed twice", ErrBadSnapshot, e.ID.Short())
				}
			}
			f.slots[i] = uint32(g + 1)
			g++
		}
	}
	return f, nil
}

// home is the first slot probed for id. Ids are BLAKE3 hashes, so their
// leading bytes are as good a hash as any.
func (f *frozen) home(id cas.ID) uint64 { return binary.LittleEndian.Uint64(id[:8]) & f.mask }

// object returns the index in f.objs of the object holding entry g.
func (f *frozen) object(g int) int {
	return sort.Search(len(f.start), func(i int) bool { return f.start[i] > g }) - 1
}

// entry returns entry number g.
func (f *frozen) entry(g int) pack.Entry {
	o := f.object(g)
	return f.objs[o].Entries[g-f.start[o]]
}

// find returns where id is: its entry and the index's number of its
// object.
func (f *frozen) find(id cas.ID) (pack.Entry, uint32, bool) {
	for i := f.home(id); f.slots[i] != 0; i = (i + 1) & f.mask {
		g := int(f.slots[i] - 1)
		o := f.object(g)
		if e := f.objs[o].Entries[g-f.start[o]]; e.ID == id {
			return e, f.nums[o], true
		}
	}
	return pack.Entry{}, 0, false
}

// has reports whether the index holds id, in its map or its frozen part.
// ix.mu must be held.
func (ix *Index) has(id cas.ID) bool {
	if _, ok := ix.locs[id]; ok {
		return true
	}
	if ix.frozen != nil {
		_, _, ok := ix.frozen.find(id)
		return ok
	}
	return false
}

// count returns the number of blobs indexed. ix.mu must be held.
func (ix *Index) count() int {
	n := len(ix.locs)
	if ix.frozen != nil {
		n += ix.frozen.n
	}
	return n
}

// thaw moves the frozen part into the map, so that what follows may
// change or walk every blob. ix.mu must be held for writing.
func (ix *Index) thaw() {
	f := ix.frozen
	if f == nil {
		return
	}
	ix.frozen = nil
	for i, o := range f.objs {
		for _, e := range o.Entries {
			ix.setNum(f.nums[i], e)
		}
	}
}
