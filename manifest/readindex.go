package manifest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/internal/lru"
)

// A reader of many steps of a session (a replay, an export, anything
// that diffs each step with the one before it) reads states whose
// layouts name almost the same objects: step n's layout is step n-1's
// and one object more, but for a merge now and then. An Index loaded for
// each read rebuilt the map of every blob of the layout each time, so
// such a reader of N steps paid N index loads, each growing with the
// layout (most of `cairn replay`'s time on a 2,000-step session).
//
// The Repo keeps instead what its reads learned of each object: the
// blobs it holds (a readTable), in an LRU bounded by size as the object
// cache is, and, for the blobs read, the object they were last found in
// (hints, bounded by count). A View of a layout is the tables of its
// objects, only the missing ones read; a lookup goes to the hinted
// object if the layout names it, and else through the layout's objects,
// newest first. A read thus costs the objects that are new to the
// reader and the blobs it reads, not the layout.

// The tables and hints a Repo keeps between reads follow its cache limit
// (NewRepo, SetCacheLimit), so that a reader who keeps its caches small
// (an export) keeps these small too. The tables take a
// readTableShare-th of the limit (16 MiB, about 300,000 blobs' entries,
// of the default 256 MiB), but no less than the limit itself up to
// minReadTables: a diff of each step of a session with the one before
// needs the tables of the session's layout, which are small beside its
// objects, to read each object once. The hints take at most one per
// hintBytes of the tables' bound (2^17 of the default; a hint takes
// about half that memory); past it they are dropped, all at once, and
// learned again by the reads that follow.
const (
	readTableShare = 16
	minReadTables  = 1 << 20
	hintBytes      = 128
)

// readBounds returns the bounds of a Repo's tables (bytes) and hints
// (count) for a cache limit of cacheBytes.
func readBounds(cacheBytes int64) (tables int64, hints int) {
	tables = max(cacheBytes/readTableShare, min(cacheBytes, minReadTables))
	return tables, int(tables / hintBytes)
}

// entryBytes is the memory one entry of a readTable takes.
const entryBytes = 56

// readTable is what a read learned of one object: its key and its
// blobs' entries, sorted by id. A table never changes once built.
type readTable struct {
	key     string
	entries []pack.Entry
}

// newReadTable returns the table of the object at key holding entries
// (which it copies).
func newReadTable(key string, entries []pack.Entry) *readTable {
	es := slices.Clone(entries)
	slices.SortFunc(es, func(a, b pack.Entry) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	return &readTable{key: key, entries: es}
}

// find returns the entry of id, if the object holds it.
func (t *readTable) find(id cas.ID) (pack.Entry, bool) {
	i := sort.Search(len(t.entries), func(i int) bool { return bytes.Compare(t.entries[i].ID[:], id[:]) >= 0 })
	if i < len(t.entries) && t.entries[i].ID == id {
		return t.entries[i], true
	}
	return pack.Entry{}, false
}

// size is the memory the table takes, roughly.
func (t *readTable) size() int64 { return int64(len(t.entries))*entryBytes + int64(len(t.key)) + 64 }

// readIndex is the tables and hints of a Repo's reads. It is safe for
// concurrent use.
type readIndex struct {
	mu     sync.Mutex
	tables *lru.Cache[string, *readTable]
	// hints maps a blob read to the key of the object it was last found
	// in (a key, not a table: an evicted table is not kept alive by it).
	hints    map[cas.ID]string
	maxHints int
	// built counts the tables built: the objects whose blobs were
	// indexed (tests).
	built int64
}

func newReadIndex(max int64, maxHints int) *readIndex {
	return &readIndex{tables: lru.New[string, *readTable](max),
		hints: make(map[cas.ID]string), maxHints: maxHints}
}

// setBounds bounds the tables to max bytes and the hints to maxHints,
// dropping the least recently used tables, or every hint, past them.
func (ri *readIndex) setBounds(max int64, maxHints int) {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	ri.tables.SetMax(max)
	ri.maxHints = maxHints
	if len(ri.hints) > maxHints {
		clear(ri.hints)
	}
}

// clear drops every table and hint.
func (ri *readIndex) clear() {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	ri.tables.Clear()
	clear(ri.hints)
}

// get returns the table of the object at key, if kept. ri.mu must be held.
func (ri *readIndex) get(key string) *readTable {
	t, _ := ri.tables.Get(key)
	return t
}

// put keeps t, in place of any table of its key; a table larger than
// the whole bound is used by the read that built it, not kept. ri.mu
// must be held.
func (ri *readIndex) put(t *readTable) {
	ri.built++
	ri.tables.Put(t.key, t, t.size())
}

// forget drops the table of the object at key: the object was deleted or
// replaced.
func (ri *readIndex) forget(key string) {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	ri.tables.Remove(key)
}

// hint returns the key of the object id was last found in.
func (ri *readIndex) hint(id cas.ID) (string, bool) {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	key, ok := ri.hints[id]
	return key, ok
}

// setHint records that id was found in the object at key.
func (ri *readIndex) setHint(id cas.ID, key string) {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	if _, ok := ri.hints[id]; !ok && len(ri.hints) >= ri.maxHints {
		clear(ri.hints)
	}
	ri.hints[id] = key
}

// View is a tree.Source over the objects of one or more layouts: the
// blobs of the steps whose layouts they are, for reading or comparing
// their states. See Repo.View.
type View struct {
	repo *Repo
	mu   sync.RWMutex
	// tables are those of the layouts' objects, in the layouts' order;
	// at maps a key to its place in tables.
	tables []*readTable
	at     map[string]int
	// fresh is set once every table was built from an object read by
	// this view, none kept from an earlier read.
	fresh bool
	// last is the place in tables of the last blob found by a search:
	// a large file's chunks, read in order, lie one pack after another,
	// so the next is most often in the same table.
	last atomic.Int64
	// fits holds the spill packs CheckBlob found within MaxObjectBytes.
	fits map[string]bool
}

// View returns a source of the blobs of the states whose layouts are
// layouts, for one read. It reads the objects of the layouts whose
// blobs no earlier read of the Repo learned (in parallel), as
// Index.Load does, and no other: a reader of many steps of a session
// reads each object about once, and builds each object's table once,
// where an Index loaded for each step rebuilt the map of the whole
// layout. Every blob is still read from an object the layouts name,
// and verified against its id (I1).
func (r *Repo) View(ctx context.Context, layouts ...Layout) (*View, error) {
	v := &View{repo: r, at: make(map[string]int)}
	for _, l := range layouts {
		for _, k := range LayoutKeys(l) {
			if _, ok := v.at[k]; !ok {
				v.at[k] = len(v.tables)
				v.tables = append(v.tables, nil)
			}
		}
	}
	var missing []string
	ri := r.reads
	ri.mu.Lock()
	for k, i := range v.at {
		if t := ri.get(k); t != nil {
			v.tables[i] = t
		} else {
			missing = append(missing, k)
		}
	}
	ri.mu.Unlock()
	if err := v.learn(ctx, missing); err != nil {
		return nil, err
	}
	v.fresh = len(missing) == len(v.tables)
	return v, nil
}

// learn reads the objects at keys (of the view) and puts their tables
// in the view and the Repo's. v.mu must be held for writing, or v not
// yet shared.
func (v *View) learn(ctx context.Context, keys []string) error {
	ri := v.repo.reads
	return v.repo.fetchAll(ctx, keys, func(key string, obj *pack.Object) {
		t := newReadTable(key, obj.Entries)
		ri.mu.Lock()
		ri.put(t)
		ri.mu.Unlock()
		v.tables[v.at[key]] = t
	})
}

// relearn reads every object of the view again, unless every table is
// fresh already, and reports whether it did.
func (v *View) relearn(ctx context.Context) (bool, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.fresh {
		return false, nil
	}
	keys := make([]string, 0, len(v.at))
	for k := range v.at {
		keys = append(keys, k)
	}
	if err := v.learn(ctx, keys); err != nil {
		return false, err
	}
	v.fresh = true
	return true, nil
}

// locate returns where id is: the key of the object holding it, and its
// entry there.
func (v *View) locate(id cas.ID) (string, pack.Entry, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if key, ok := v.repo.reads.hint(id); ok {
		if i, ok := v.at[key]; ok {
			if e, ok := v.tables[i].find(id); ok {
				return key, e, true
			}
		}
	}
	if i := int(v.last.Load()); i < len(v.tables) {
		if e, ok := v.tables[i].find(id); ok {
			key := v.tables[i].key
			v.repo.reads.setHint(id, key)
			return key, e, true
		}
	}
	// Newest first: a step's new blobs are in its own object, the last
	// step object of its layout (spill packs after it hold only file
	// chunks, which a diff seldom reads).
	for i := len(v.tables) - 1; i >= 0; i-- {
		if e, ok := v.tables[i].find(id); ok {
			key := v.tables[i].key
			v.repo.reads.setHint(id, key)
			v.last.Store(int64(i))
			return key, e, true
		}
	}
	return "", pack.Entry{}, false
}

// Blob implements tree.Source: it returns the verified raw bytes of id,
// read from an object of the view's layouts.
func (v *View) Blob(ctx context.Context, id cas.ID) ([]byte, error) {
	for {
		key, e, ok := v.locate(id)
		var err error
		if ok {
			var obj *pack.Object
			if obj, err = v.repo.blobObject(ctx, key); err != nil {
				return nil, err
			}
			if obj == nil {
				var raw []byte
				if raw, err = v.repo.rangedBlob(ctx, key, e); err == nil || !errors.Is(err, cas.ErrCorrupt) {
					return raw, err
				}
			} else if holds(obj, e) {
				return obj.Blob(e)
			} else {
				err = fmt.Errorf("%w: %s: no blob %s where its index says", cas.ErrCorrupt, DescribeKey(key), id.Short())
			}
		} else {
			err = fmt.Errorf("%w: blob %s is not in any object of the step's layout", cas.ErrCorrupt, id.Short())
		}
		// Not found, or not where the table says: a table kept from an
		// earlier read may describe an object gc has deleted since, its
		// slot filled again. Read the layouts' objects again, as an
		// index loaded for this read would have, and look once more.
		again, lerr := v.relearn(ctx)
		if lerr != nil {
			return nil, lerr
		}
		if !again {
			return nil, err
		}
	}
}

// CheckBlob reports the error on a read limit that Blob(id) would fail
// with, without reading the blob (tree.Reader.CheckJSON and
// CheckCheckout call it for every blob a state names, so that a state
// whose read stops on a limit writes nothing). The only such limit left
// once the view exists is MaxObjectBytes on a large-file (spill) pack:
// every other object of the view was read whole when the view learned
// its index, within the limit, but a spill pack only as far as its
// index, and Blob reads it whole. Its size is asked of the store, once
// for each pack. A blob not found, or an object that cannot be asked,
// is left to Blob to report.
func (v *View) CheckBlob(ctx context.Context, id cas.ID) error {
	key, _, ok := v.locate(id)
	if !ok {
		return nil
	}
	if _, _, _, spill := ParseSpillKey(key); !spill {
		return nil
	}
	v.mu.Lock()
	if v.fits == nil {
		v.fits = make(map[string]bool)
	}
	fits := v.fits[key]
	v.mu.Unlock()
	if fits || v.repo.spills.get(key) != nil {
		return nil
	}
	info, err := v.repo.store.Stat(ctx, key)
	if err == nil && info.Size > v.repo.maxObject() {
		return objectLimit(key, v.repo.maxObject())
	}
	v.mu.Lock()
	v.fits[key] = true
	v.mu.Unlock()
	return nil
}

// holds reports whether obj has entry e, where e says. An object's
// entries are in the order of their offsets.
func holds(obj *pack.Object, e pack.Entry) bool {
	es := obj.Entries
	i := sort.Search(len(es), func(i int) bool { return es[i].Offset >= e.Offset })
	return i < len(es) && es[i] == e
}
