package manifest

import (
	"context"
	"fmt"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/manifest/tree"
)

// Compaction keeps the number of objects a layout names at
// O(fanout × log_fanout(steps)), so that a fresh resume of a long session
// reads few objects, as an LSM tree does:
//
//   - Step objects are level 0. When a parent's layout holds fanout of
//     them, the committer of the next step merges their live blobs (those
//     its new state reaches) into one level-1 pack.
//   - If the layout already holds fanout-1 packs of level 1, they join the
//     merge and the result is level 2, and so on up. Each blob is thus
//     copied once per level, O(log n) times in all.
//   - The pack is the step's own object: the merged blobs travel with the
//     step's new blobs and its manifest, which names its own object as
//     the pack (PackRef.InStep) in place of the merged objects, in the
//     step's one conditional put. A merge thus costs no request of its
//     own, and a commit that crashes or loses its slot leaves nothing
//     behind (I2, I3). Older manifests keep naming the step objects and
//     packs they always named, so no acknowledged step becomes
//     unreadable; objects only a superseded layout names are for GC to
//     judge (it must keep every object any live manifest's layout names:
//     LayoutKeys).
//
// Versions before manifest format 5 wrote the pack as an object of its
// own (packs/<session>/<n>) before the step object; their layouts still
// read, and gc still treats such a pack as in flight while its step's
// slot is empty.

// DefaultFanout is the number of objects of one level a layout may hold
// before they are merged into one object of the next level. 32 keeps a
// session of up to 1,024 steps at one level of packs: at most 63
// objects to resume, and each blob copied once (about 2x the bytes of
// the step objects alone). Fanout 16 reads fewer objects (at most 33 at
// 1,000 steps) but copies most blobs twice by then.
const DefaultFanout = 32

// KeepObjectBytes: step objects at the front of a layout's steps whose
// blobs take at least this many stored bytes are left out of merges and
// stay where they are. Such an object is already one large read for a
// resume, so merging it buys little locality, and copying it cost a
// commit its whole size: the first step of a directory state holds the
// whole initial tree (7.7 MB on the 2,000-file workload, copied at step
// 33, was most of what that workload's first 100 steps wrote). Only a
// prefix of the steps is kept, so everything merged is newer than
// everything kept, the order the merge's walk relies on (liveWalk).
const KeepObjectBytes = 4 << 20

// keptPrefix splits steps into the leading step objects that the index
// knows to be at least KeepObjectBytes, and the rest.
func keptPrefix(steps []Range, ix *Index) (kept, rest []Range) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for i, rg := range steps {
		for n := rg.First; n <= rg.Last; n++ {
			if b, ok := ix.bytes[StepKey(rg.Session, n)]; ok && b >= KeepObjectBytes {
				continue
			}
			kept = append(append([]Range(nil), steps[:i]...), Range{Session: rg.Session, First: rg.First, Last: n - 1})
			if n == rg.First {
				kept = kept[:i]
			}
			rest = append([]Range{{Session: rg.Session, First: n, Last: rg.Last}}, steps[i+1:]...)
			return kept, rest
		}
	}
	return append([]Range(nil), steps...), nil
}

// compaction is a merge of the newest objects of a layout into one pack,
// the step object of the commit that merges them.
type compaction struct {
	// merged are the keys of the objects the pack replaces.
	merged []string
	// key is the new pack's key (the step's); empty when none of the
	// merged objects' blobs is still live: the layout just drops them.
	key string
	// blobs are the merged blobs, for the step object; entries their
	// index in it, once it is written.
	blobs   *pack.Builder
	entries []pack.Entry
	// layout is the parent's layout with the merged objects replaced.
	layout Layout
}

// plan decides what a compaction of l merges: every step object and the
// packs of the levels that would otherwise overflow. It returns ok=false
// if nothing is due.
func plan(l Layout, fanout int) (mergePacks int, level uint8, ok bool) {
	var steps uint64
	for _, r := range l.Steps {
		steps += r.Last - r.First + 1
	}
	if fanout < 2 || steps < uint64(fanout) {
		return 0, 0, false
	}
	counts := map[uint8]int{}
	for _, p := range l.Packs {
		counts[p.Level]++
	}
	level = 1
	for level < MaxLevel && counts[level] >= fanout-1 {
		level++
	}
	// Merge the suffix of packs below the new level (packs are kept in
	// descending level order, so this is exactly those packs).
	first := len(l.Packs)
	for i, p := range l.Packs {
		if p.Level < level {
			first = i
			break
		}
	}
	for _, p := range l.Packs[first:] {
		if p.Level >= level && p.Level < MaxLevel {
			level = p.Level + 1 // a layout out of order: stay monotone
		}
	}
	return len(l.Packs) - first, level, true
}

// blobSource returns the raw bytes of blobs not yet in any object (the
// new blobs of the step being committed); ok is false for others.
type blobSource interface {
	Blob(id cas.ID) (raw []byte, ok bool, err error)
}

// compact returns the compaction due on layout l, the parent layout of a
// step whose state has root root, or nil if none is due. ix must index l
// (it is the committer's dedup index); fresh holds the step's new blobs,
// which count against the step object's bound on blobs. Only blobs root
// reaches go into the pack. compact writes nothing.
func (r *Repo) compact(ctx context.Context, session string, step uint64, l Layout, root tree.Ref, ix *Index, fresh *pack.Builder, fanout int) (*compaction, error) {
	kept, rest := keptPrefix(l.Steps, ix)
	nPacks, level, ok := plan(Layout{Packs: l.Packs, Steps: rest}, fanout)
	if !ok {
		return nil, nil
	}
	c := &compaction{layout: Layout{Packs: append([]PackRef(nil), l.Packs[:len(l.Packs)-nPacks]...), Steps: kept}}
	merged := map[string]bool{}
	for _, k := range LayoutKeys(Layout{Packs: l.Packs[len(l.Packs)-nPacks:], Steps: rest}) {
		merged[k] = true
		c.merged = append(c.merged, k)
	}
	var b pack.Builder
	w := &liveWalk{src: &mergeSource{repo: r, ix: ix, merged: merged}, ix: ix, fresh: fresh, merged: merged, b: &b, seen: map[walked]bool{}}
	if err := w.visit(ctx, root, 0); err != nil {
		return nil, fmt.Errorf("compact %d objects: %w", len(c.merged), err)
	}
	if b.Len() == 0 {
		return c, nil
	}
	if b.Len()+fresh.Len() > pack.MaxBlobs {
		return nil, nil // too many to merge into one object: leave the layout as it is
	}
	c.blobs = &b
	c.key = StepKey(session, step)
	c.layout.Packs = append(c.layout.Packs, PackRef{Session: session, Number: step, Level: level, InStep: true})
	return c, nil
}

// located keeps, of the entries of the written step object, those of the
// merged blobs: where the pack now holds them.
func (c *compaction) located(entries []pack.Entry) {
	if c.blobs == nil {
		return
	}
	for _, e := range entries {
		if c.blobs.Has(e.ID) {
			c.entries = append(c.entries, e)
		}
	}
}

// liveWalk collects into b the blobs of the merged objects that a state
// reaches. It relies on an order invariant: a node's children are located
// (in the oldest object of the layout holding them) in the node's own
// object or in older ones, since a node is written with or after its
// children and merges keep the layout in age order. The merged objects
// are the newest of the layout, so a subtree whose root lives in an
// older object holds nothing to merge and is skipped.
type liveWalk struct {
	src    *mergeSource
	ix     *Index
	fresh  blobSource
	merged map[string]bool
	b      *pack.Builder
	seen   map[walked]bool
}

// walked is a visited ref: its id, and whether it was visited as a node.
type walked struct {
	id   cas.ID
	node bool
}

func (w *liveWalk) visit(ctx context.Context, ref tree.Ref, depth int) error {
	// A blob and a node may have the same bytes, and so the same id (a
	// file can hold a node's encoding): seeing one does not walk the other.
	at := walked{ref.ID, ref.Kind == tree.Node}
	if ref.Kind == tree.Inline || w.seen[at] {
		return nil
	}
	if depth > tree.DefaultLimits.MaxDepth {
		return fmt.Errorf("%w: tree deeper than %d", tree.ErrLimit, tree.DefaultLimits.MaxDepth)
	}
	w.seen[at] = true
	raw, ok, err := w.fresh.Blob(ref.ID)
	if err != nil {
		return err
	}
	if !ok {
		loc, found := w.ix.Locate(ref.ID)
		if !found {
			return fmt.Errorf("%w: blob %s is not in any object of the layout", cas.ErrCorrupt, ref.ID.Short())
		}
		// A spill pack holds file chunks, never nodes: a node found in
		// one is a chunk with the same bytes, and what lies below it was
		// not written with it, so the walk goes on below (spill.go).
		_, _, _, inSpill := ParseSpillKey(loc.Key)
		if !w.merged[loc.Key] && !(inSpill && ref.Kind == tree.Node) {
			return nil // older: nothing below it is merged
		}
		obj, err := w.src.object(ctx, loc.Key)
		if err != nil {
			return err
		}
		if w.merged[loc.Key] {
			w.b.AddStored(ref.ID, loc.Entry.RawLen, obj.Stored(loc.Entry))
		}
		if ref.Kind != tree.Node {
			return nil
		}
		if raw, err = obj.Blob(loc.Entry); err != nil {
			return err
		}
	}
	if ref.Kind != tree.Node {
		return nil
	}
	n, err := tree.DecodeNode(raw, "node "+ref.ID.Short())
	if err != nil {
		return err
	}
	for _, e := range n.Entries {
		if err := w.visit(ctx, e.Ref, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// compacted updates a writer's index once the step whose layout applies
// c is acknowledged: blobs of the merged objects are now in the pack, or
// gone from the chain's view if they were dead. The merged objects also
// leave the object cache: the writer kept them at hand for this merge
// (WriteStep and writePack remember what they write), and its chain will
// not read them again (nor their local copies, which go too). Without this the cache held every step object the
// writer ever wrote, up to its bound, so a writer's memory grew with the
// session's length (issue 14, target 5) instead of with its layout.
func (ix *Index) compacted(c *compaction) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.thaw()
	merged := make(map[uint32]bool, len(c.merged))
	for _, k := range c.merged {
		if n, ok := ix.num[k]; ok {
			merged[n] = true
		}
		ix.repo.forget(k)
		if lo := ix.repo.localObjects(); lo != nil {
			lo.Drop(k)
		}
	}
	inPack := make(map[cas.ID]pack.Entry, len(c.entries))
	for _, e := range c.entries {
		inPack[e.ID] = e
	}
	for id, loc := range ix.locs {
		if !merged[loc.obj] {
			continue
		}
		if e, ok := inPack[id]; ok {
			ix.set(c.key, e)
		} else {
			ix.remove(id)
		}
	}
	for _, k := range c.merged {
		if k != c.key { // entries were just moved to c.key: keep its number
			ix.dropObj(k)
		}
	}
	if c.key != "" {
		ix.keys[c.key] = true
		ix.bytes[c.key] = 0
		for _, e := range c.entries {
			ix.bytes[c.key] += e.StoredLen
		}
	}
}
