package manifest

import (
	"context"
	"fmt"
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
type Index struct {
	repo *Repo
	mu   sync.RWMutex
	locs map[cas.ID]Location
	keys map[string]bool
	// bytes is the stored size of each indexed object's blobs.
	bytes map[string]int64
}

// NewIndex returns an empty index over repo.
func (r *Repo) NewIndex() *Index {
	return &Index{repo: r, locs: make(map[cas.ID]Location), keys: make(map[string]bool), bytes: make(map[string]int64)}
}

// Load reads every object of layout that the index does not cover yet
// (in parallel) and adds their blobs.
func (ix *Index) Load(ctx context.Context, l Layout) error {
	var missing []string
	ix.mu.RLock()
	for _, k := range LayoutKeys(l) {
		if !ix.keys[k] {
			missing = append(missing, k)
		}
	}
	ix.mu.RUnlock()
	return ix.repo.fetchAll(ctx, missing, func(key string, obj *pack.Object) {
		ix.Add(key, obj.Entries)
	})
}

// Add records that the object at key holds entries.
func (ix *Index) Add(key string, entries []pack.Entry) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.keys[key] = true
	ix.bytes[key] = 0
	for _, e := range entries {
		ix.bytes[key] += e.StoredLen
		if _, ok := ix.locs[e.ID]; !ok {
			ix.locs[e.ID] = Location{Key: key, Entry: e}
		}
	}
}

// Has reports whether the index holds id.
func (ix *Index) Has(id cas.ID) bool {
	ix.mu.RLock()
	_, ok := ix.locs[id]
	ix.mu.RUnlock()
	return ok
}

// Len returns the number of blobs indexed.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.locs)
}

// Locate returns where id is stored.
func (ix *Index) Locate(id cas.ID) (Location, bool) {
	ix.mu.RLock()
	loc, ok := ix.locs[id]
	ix.mu.RUnlock()
	return loc, ok
}

// Blob implements tree.Source: it returns the verified raw bytes of id.
func (ix *Index) Blob(ctx context.Context, id cas.ID) ([]byte, error) {
	loc, ok := ix.Locate(id)
	if !ok {
		return nil, fmt.Errorf("%w: blob %s is not in any object of the step's layout", cas.ErrCorrupt, id.Short())
	}
	obj, err := ix.repo.object(ctx, loc.Key)
	if err != nil {
		return nil, err
	}
	return obj.Blob(loc.Entry)
}
