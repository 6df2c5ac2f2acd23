package manifest

import (
	"context"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
)

// LocalObjects holds copies, kept outside the store, of objects that
// commits on this machine wrote: a CLI commit keeps each step object and
// pack it writes, and the commit in a later process that merges them into
// a pack (compaction) reads them there instead of from the store.
//
// A copy is a hint, never an authority: it may be damaged, stale, or the
// bytes of another object, and the compactor uses it only if every blob
// in it decodes to its id and it holds exactly the blobs the writer's
// index places in that object (mergeSource). Any other copy costs the
// GET it would have saved, never a wrong byte in a pack.
type LocalObjects interface {
	// Object returns the bytes kept for the object at key, or nil.
	Object(key string) []byte
	// Keep keeps data as the object at key, which this process has just
	// written to the store. Best effort.
	Keep(key string, data []byte)
	// Drop forgets the copy of the object at key, if any.
	Drop(key string)
}

// UseLocalObjects makes r keep a copy in lo of each step object with
// blobs and each pack its commits write, and makes compaction read the
// objects it merges from there when their copy checks out. nil turns it
// off. Call it before use; called beside commits it is safe, and holds
// for the writes that begin after it.
func (r *Repo) UseLocalObjects(lo LocalObjects) {
	if lo == nil {
		r.local.Store(nil)
		return
	}
	r.local.Store(&localRef{lo})
}

// localRef holds the LocalObjects a Repo uses, which UseLocalObjects may
// set beside commits.
type localRef struct{ LocalObjects }

// localObjects returns the local objects r uses, nil if none.
func (r *Repo) localObjects() LocalObjects {
	if ref := r.local.Load(); ref != nil {
		return ref.LocalObjects
	}
	return nil
}

// keepLocal keeps a copy of the object at key if r has local objects.
func (r *Repo) keepLocal(key string, data []byte) {
	if lo := r.localObjects(); lo != nil {
		lo.Keep(key, data)
	}
}

// mergeSource returns the objects a compaction merges: from the object
// cache, else from their local copy if it matches the index, else from
// the store.
type mergeSource struct {
	repo   *Repo
	ix     *Index
	merged map[string]bool
	// placed holds, for each merged object, the entries the index locates
	// in it; computed on the first local copy looked at.
	placed map[string]map[cas.ID]pack.Entry
	// local holds the local copies that checked out.
	local map[string]*pack.Object
}

// object returns the parsed object at key.
func (m *mergeSource) object(ctx context.Context, key string) (*pack.Object, error) {
	if o := m.local[key]; o != nil {
		return o, nil
	}
	if lo := m.repo.localObjects(); lo != nil && m.merged[key] && m.repo.cache.get(key) == nil {
		if o := m.localCopy(lo, key); o != nil {
			if m.local == nil {
				m.local = map[string]*pack.Object{}
			}
			m.local[key] = o
			return o, nil
		}
	}
	return m.repo.object(ctx, key)
}

// localCopy returns the local copy of the merged object at key, parsed,
// if it holds exactly the blobs (ids, offsets and lengths) that the
// index places in that object and each of them decodes to its id; nil
// otherwise. The walk takes a merged blob's stored bytes at the offset
// the index gives (liveWalk.visit), so a copy that held the right blobs
// at other offsets would put wrong bytes in the pack: hence the exact
// match, not only the hashes.
func (m *mergeSource) localCopy(lo LocalObjects, key string) *pack.Object {
	data := lo.Object(key)
	if data == nil {
		return nil
	}
	obj, err := pack.Parse(data, DescribeKey(key))
	if err != nil {
		return nil
	}
	if m.placed == nil {
		m.placed = m.ix.placed(m.merged)
	}
	want := m.placed[key]
	if len(obj.Entries) != len(want) {
		return nil
	}
	seen := make(map[cas.ID]bool, len(want))
	for _, e := range obj.Entries {
		if w, ok := want[e.ID]; !ok || w != e || seen[e.ID] {
			return nil
		}
		seen[e.ID] = true
	}
	for _, e := range obj.Entries {
		if _, err := obj.Blob(e); err != nil {
			return nil
		}
	}
	return obj
}

// placed returns, for each object in keys, the entries the index locates
// in it, by id.
func (ix *Index) placed(keys map[string]bool) map[string]map[cas.ID]pack.Entry {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := make(map[string]map[cas.ID]pack.Entry, len(keys))
	nums := make(map[uint32]string, len(keys))
	for k := range keys {
		out[k] = map[cas.ID]pack.Entry{}
		if n, ok := ix.num[k]; ok {
			nums[n] = k
		}
	}
	for id, l := range ix.locs {
		if k, ok := nums[l.obj]; ok {
			out[k][id] = ix.location(id, l).Entry
		}
	}
	if f := ix.frozen; f != nil {
		for i, o := range f.objs {
			if k, ok := nums[f.nums[i]]; ok {
				for _, e := range o.Entries {
					out[k][e.ID] = e
				}
			}
		}
	}
	return out
}
