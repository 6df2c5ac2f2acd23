package manifest

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
)

// Location says where a blob is stored.
type Location struct {
	Key   string
	Entry pack.Entry
}

// Index maps blob ids to their locations for one chain of steps. It is
// the writer's dedup set and the reader's tree.Source.
//
// A writer keeps its index for the whole session, and it holds a blob
// for every blob of every object of the layout, dead ones included until
// a merge drops them: the entries are kept small (an object number in
// place of the key, no second copy of the id), so that the index costs
// its writer about half the memory it did (issue 14, target 5).
type Index struct {
	repo *Repo
	mu   sync.RWMutex
	locs map[cas.ID]blobLoc
	// big holds the entries whose lengths do not fit a blobLoc.
	big  map[cas.ID]pack.Entry
	keys map[string]bool
	// bytes is the stored size of each indexed object's blobs.
	bytes map[string]int64
	// objs names the objects by number (blobLoc.obj); num numbers them
	// and free lists the numbers of objects the index dropped.
	objs []string
	num  map[string]uint32
	free []uint32
	// snap, if not nil, is the index as a snapshot (see Snapshot): the
	// objects RestoreHead restored and those added since, each with
	// exactly the blobs the index located in it. It is kept only while
	// the index has only grown by Add: any other change drops it, and
	// Snapshot then builds the snapshot from the map.
	snap []IndexObject
	// frozen, if not nil, holds the blobs RestoreHead restored, apart
	// from locs (which holds the rest): see frozen.
	frozen *frozen
	// loaded, if not nil, is a layout every object of which the index
	// holds: the last one Load loaded or Commit wrote. A writer's next
	// Load is of that layout, and comparing it costs less than building
	// and looking up its keys, whose number grows with the session's
	// compaction levels (issue 14, target 5). drops counts dropObj calls,
	// so that a Load that raced one does not record its layout.
	loaded *Layout
	drops  uint64
}

// blobLoc is a Location as the index keeps it.
type blobLoc struct {
	off         int64
	stored, raw uint32 // bigLen: the entry is in Index.big
	obj         uint32
}

const bigLen = math.MaxUint32

// NewIndex returns an empty index over repo.
func (r *Repo) NewIndex() *Index { return r.newIndex(0, 0) }

// newIndex returns an empty index sized for blobs entries in objects.
func (r *Repo) newIndex(blobs, objects int) *Index {
	return &Index{repo: r, locs: make(map[cas.ID]blobLoc, blobs), keys: make(map[string]bool, objects),
		bytes: make(map[string]int64, objects), num: make(map[string]uint32, objects)}
}

// objNum returns the number of the object at key, numbering it if new.
// ix.mu must be held for writing.
func (ix *Index) objNum(key string) uint32 {
	if n, ok := ix.num[key]; ok {
		return n
	}
	var n uint32
	if k := len(ix.free); k > 0 {
		n, ix.free = ix.free[k-1], ix.free[:k-1]
		ix.objs[n] = key
	} else {
		n = uint32(len(ix.objs))
		ix.objs = append(ix.objs, key)
	}
	ix.num[key] = n
	return n
}

// dropObj forgets the object at key and frees its number. No blob may
// still be located in it. ix.mu must be held for writing.
func (ix *Index) dropObj(key string) {
	ix.snap = nil
	ix.loaded = nil
	ix.drops++
	delete(ix.keys, key)
	delete(ix.bytes, key)
	if n, ok := ix.num[key]; ok {
		delete(ix.num, key)
		ix.objs[n] = ""
		ix.free = append(ix.free, n)
	}
}

// set locates id at e in the object at key. ix.mu must be held for
// writing.
func (ix *Index) set(key string, e pack.Entry) {
	ix.snap = nil // perhaps moved, not added
	ix.thaw()
	ix.setNum(ix.objNum(key), e)
}

// setNum locates id at e in the object numbered obj (objNum). ix.mu must
// be held for writing, and id must not be in the frozen part.
func (ix *Index) setNum(obj uint32, e pack.Entry) {
	l := blobLoc{off: e.Offset, stored: uint32(e.StoredLen), raw: uint32(e.RawLen), obj: obj}
	if ix.big != nil {
		delete(ix.big, e.ID)
	}
	if e.StoredLen < 0 || e.StoredLen >= bigLen || e.RawLen < 0 || e.RawLen >= bigLen {
		if ix.big == nil {
			ix.big = make(map[cas.ID]pack.Entry)
		}
		ix.big[e.ID] = e
		l.stored, l.raw = bigLen, bigLen
	}
	ix.locs[e.ID] = l
}

// remove forgets id. ix.mu must be held for writing.
func (ix *Index) remove(id cas.ID) {
	ix.thaw()
	delete(ix.locs, id)
	delete(ix.big, id)
	ix.snap = nil
}

// location returns the Location of id, kept as l. ix.mu must be held.
func (ix *Index) location(id cas.ID, l blobLoc) Location {
	loc := Location{Key: ix.objs[l.obj], Entry: pack.Entry{ID: id, Offset: l.off, StoredLen: int64(l.stored), RawLen: int64(l.raw)}}
	if l.stored == bigLen && l.raw == bigLen {
		loc.Entry = ix.big[id]
	}
	return loc
}

// Load reads every object of layout that the index does not cover yet
// (in parallel) and adds their blobs.
func (ix *Index) Load(ctx context.Context, l Layout) error {
	var missing []string
	ix.mu.RLock()
	if ix.loaded != nil && ix.loaded.equal(l) {
		ix.mu.RUnlock()
		return nil
	}
	drops := ix.drops
	for _, k := range LayoutKeys(l) {
		if !ix.keys[k] {
			missing = append(missing, k)
		}
	}
	ix.mu.RUnlock()
	err := ix.repo.fetchAll(ctx, missing, func(key string, obj *pack.Object) {
		ix.Add(key, obj.Entries)
	})
	if err == nil {
		ix.mu.Lock()
		if ix.drops == drops {
			ix.setLoaded(l)
		}
		ix.mu.Unlock()
	}
	return err
}

// setLoaded records that the index holds every object of l (Index.loaded).
// ix.mu must be held for writing.
func (ix *Index) setLoaded(l Layout) {
	c := l.clone()
	ix.loaded = &c
}

// wrote records that a commit added every object of its step's layout l
// to the index.
func (ix *Index) wrote(l Layout) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.setLoaded(l)
}

// Add records that the object at key holds entries.
func (ix *Index) Add(key string, entries []pack.Entry) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.add(key, entries)
}

// add is Add with ix.mu held for writing. The object's number and size
// are looked up once, not per entry: a fresh process restoring a cached
// index adds every blob of the layout (issue 14, target 7).
func (ix *Index) add(key string, entries []pack.Entry) {
	ix.keys[key] = true
	var bytes int64
	obj, numbered := uint32(0), false
	var located []pack.Entry
	for i, e := range entries {
		bytes += e.StoredLen
		if !ix.has(e.ID) {
			if !numbered {
				obj, numbered = ix.objNum(key), true
			}
			ix.setNum(obj, e)
			if located != nil {
				located = append(located, e)
			}
		} else if located == nil && ix.snap != nil {
			located = append(make([]pack.Entry, 0, len(entries)), entries[:i]...)
		}
	}
	ix.bytes[key] = bytes
	if ix.snap != nil {
		// The entries it located (those whose id the index did not hold
		// yet), copied: the caller's slice is not the index's to keep.
		if located == nil {
			located = slices.Clone(entries)
		}
		ix.snap = append(ix.snap, IndexObject{Key: key, Bytes: bytes, Entries: located})
	}
}

// Has reports whether the index holds id.
func (ix *Index) Has(id cas.ID) bool {
	ix.mu.RLock()
	ok := ix.has(id)
	ix.mu.RUnlock()
	return ok
}

// Len returns the number of blobs indexed.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.count()
}

// Locate returns where id is stored.
func (ix *Index) Locate(id cas.ID) (Location, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if l, ok := ix.locs[id]; ok {
		return ix.location(id, l), true
	}
	if ix.frozen != nil {
		if e, obj, ok := ix.frozen.find(id); ok {
			return Location{Key: ix.objs[obj], Entry: e}, true
		}
	}
	return Location{}, false
}

// Blob implements tree.Source: it returns the verified raw bytes of id.
func (ix *Index) Blob(ctx context.Context, id cas.ID) ([]byte, error) {
	loc, ok := ix.Locate(id)
	if !ok {
		return nil, fmt.Errorf("%w: blob %s is not in any object of the step's layout", cas.ErrCorrupt, id.Short())
	}
	obj, err := ix.repo.blobObject(ctx, loc.Key)
	if err != nil {
		return nil, err
	}
	if obj == nil {
		return ix.repo.rangedBlob(ctx, loc.Key, loc.Entry)
	}
	return obj.Blob(loc.Entry)
}
