package manifest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
)

// A writer's index can be carried from one process to the next: a CLI
// commit saves the index of the step it acknowledged (Snapshot) and the
// next process restores it (RestoreHead) instead of reading every object
// of the head's layout. The snapshot is a hint kept outside the store;
// the step slot above the head stays the fence (see Commit).

// IndexObject is one object of an index snapshot: its key, the stored
// size of its blobs, and the blobs the index locates in it.
type IndexObject struct {
	Key     string
	Bytes   int64
	Entries []pack.Entry
}

// ErrBadSnapshot reports an index snapshot that does not describe the
// layout it is restored for.
var ErrBadSnapshot = errors.New("index snapshot does not match the step's layout")

// Snapshot returns the index as the objects of layout l, in key order,
// each with the blobs the index locates in it (in no particular order;
// the entries may be the index's own: the caller must not modify them). It reports false if the
// index does not cover exactly l's objects: a snapshot is only taken of
// a writer's index right after the step whose layout is l.
func (ix *Index) Snapshot(l Layout) ([]IndexObject, bool) {
	keys := LayoutKeys(l)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if out, ok := ix.keptSnapshot(keys); ok {
		return out, true
	}
	return ix.buildSnapshot(keys)
}

// keptSnapshot returns ix.snap as the snapshot of the objects keys, if
// it is one: a restored index that has only grown by Add since, in a
// fresh CLI process, snapshots without going over every blob of its map
// (issue 14, target 7). It checks that the kept objects are exactly
// keys, each once with the index's size for it, and hold as many blobs
// as the index; anything else is left to buildSnapshot. ix.mu must be
// held.
func (ix *Index) keptSnapshot(keys []string) ([]IndexObject, bool) {
	if ix.snap == nil || len(ix.snap) != len(keys) {
		return nil, false
	}
	out := slices.Clone(ix.snap)
	slices.SortFunc(out, func(a, b IndexObject) int { return strings.Compare(a.Key, b.Key) })
	want := slices.Clone(keys)
	slices.Sort(want)
	blobs := 0
	for i, o := range out {
		if o.Key != want[i] || (i > 0 && o.Key == out[i-1].Key) || !ix.keys[o.Key] || ix.bytes[o.Key] != o.Bytes {
			return nil, false
		}
		blobs += len(o.Entries)
	}
	if blobs != ix.count() {
		return nil, false
	}
	return out, true
}

// buildSnapshot is Snapshot from the index's map. ix.mu must be held.
func (ix *Index) buildSnapshot(keys []string) ([]IndexObject, bool) {
	out := make([]IndexObject, 0, len(keys))
	for _, k := range keys {
		if !ix.keys[k] {
			return nil, false
		}
		out = append(out, IndexObject{Key: k, Bytes: ix.bytes[k]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	// Each object's place in out, by its number in the index (-1: not
	// in l): a slice, not a map by key, as the loops below run once per
	// blob of the layout.
	pos := make([]int32, len(ix.objs))
	for i := range pos {
		pos[i] = -1
	}
	for i, o := range out {
		if i > 0 && o.Key == out[i-1].Key {
			return nil, false
		}
		if n, ok := ix.num[o.Key]; ok {
			pos[n] = int32(i)
		}
	}
	// Two passes over the index: count each object's blobs, then fill
	// slices of exactly that size (one allocation for all of them).
	counts := make([]int, len(out))
	for _, l := range ix.locs {
		i := pos[l.obj]
		if i < 0 {
			return nil, false
		}
		counts[i]++
	}
	f := ix.frozen
	if f != nil {
		for j, o := range f.objs {
			i := pos[f.nums[j]]
			if i < 0 {
				return nil, false
			}
			counts[i] += len(o.Entries)
		}
	}
	all := make([]pack.Entry, 0, ix.count())
	for i, n := range counts {
		out[i].Entries = all[len(all) : len(all) : len(all)+n]
		all = all[:len(all)+n]
	}
	for id, l := range ix.locs {
		i := pos[l.obj]
		out[i].Entries = append(out[i].Entries, ix.location(id, l).Entry)
	}
	if f != nil {
		for j, o := range f.objs {
			i := pos[f.nums[j]]
			out[i].Entries = append(out[i].Entries, o.Entries...)
		}
	}
	return out, true
}

// RestoreHead rebuilds the head step of session and its writer's index
// from a manifest's encoded bytes, its id and an index snapshot, as a
// previous process saved them after committing that step. It reads
// nothing from the store. It fails with ErrBadSnapshot unless the
// manifest hashes to id, names session, and the snapshot covers exactly
// the objects of the manifest's layout with sane entries; the manifest
// itself is checked as Decode checks one read from the store.
func (r *Repo) RestoreHead(session string, mb []byte, id cas.ID, objs []IndexObject) (*Step, *Index, error) {
	if cas.Sum(mb) != id {
		return nil, nil, fmt.Errorf("%w: manifest hash", ErrBadSnapshot)
	}
	m, err := Decode(mb, "cached head of "+session)
	if err != nil {
		return nil, nil, err
	}
	if m.Session != session || m.Number == 0 {
		return nil, nil, fmt.Errorf("%w: manifest of %s@%d", ErrBadSnapshot, m.Session, m.Number)
	}
	if err := m.Layout.Check(m.Number); err != nil {
		return nil, nil, err
	}
	keys := LayoutKeys(m.Layout)
	if len(keys) != len(objs) {
		return nil, nil, fmt.Errorf("%w: %d objects for a layout of %d", ErrBadSnapshot, len(objs), len(keys))
	}
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	total := 0
	for _, o := range objs {
		total += len(o.Entries)
	}
	if total > math.MaxUint32-1 {
		return nil, nil, fmt.Errorf("%w: %d blobs", ErrBadSnapshot, total)
	}
	// The restored blobs go into the frozen part, not the map.
	ix := r.newIndex(0, len(objs))
	// ix is not shared yet; the lock only keeps add's contract.
	ix.mu.Lock()
	defer ix.mu.Unlock()
	// The restored objects are the snapshot of the index they describe
	// until it changes other than by Add (kept, not copied: objs is the
	// index's from here on).
	limit := r.maxObject()
	var withEntries []IndexObject
	var nums []uint32
	for _, o := range objs {
		if !want[o.Key] {
			return nil, nil, fmt.Errorf("%w: object %s", ErrBadSnapshot, DescribeKey(o.Key))
		}
		delete(want, o.Key)
		if o.Bytes < 0 {
			return nil, nil, fmt.Errorf("%w: size of %s", ErrBadSnapshot, DescribeKey(o.Key))
		}
		ix.keys[o.Key] = true
		ix.bytes[o.Key] = o.Bytes
		if len(o.Entries) == 0 {
			continue
		}
		for _, e := range o.Entries {
			if e.Offset < 0 || e.StoredLen < 0 || e.RawLen < 0 || e.Offset > limit || e.StoredLen > limit-e.Offset {
				return nil, nil, fmt.Errorf("%w: entry of %s", ErrBadSnapshot, DescribeKey(o.Key))
			}
		}
		withEntries = append(withEntries, o)
		nums = append(nums, ix.objNum(o.Key))
	}
	// Snapshot lists each blob once, so a blob listed twice is a file
	// Snapshot did not write.
	if ix.frozen, err = newFrozen(withEntries, nums); err != nil {
		return nil, nil, err
	}
	if len(want) != 0 {
		return nil, nil, fmt.Errorf("%w: an object is listed twice", ErrBadSnapshot)
	}
	snap := make([]IndexObject, len(objs), len(objs)+4)
	copy(snap, objs)
	ix.snap = snap
	key := StepKey(session, m.Number)
	return &Step{Manifest: m, ID: id, Key: key, ManifestBytes: int64(len(mb))}, ix, nil
}

// HoldsStep reports whether the store's slot n of session holds the step
// whose manifest, mlen bytes long, hashes to id: whether a head saved
// earlier (the head cache) is still the step the store has there, and not
// gone (a store restored from an older copy, a session removed and
// collected) or another step of the same number (a store wiped and
// rebuilt, another store at the same URL). It costs one ranged GET of the
// step object's header up to the end of its manifest, straight from the
// store. An empty slot, a shorter object or any other step is false.
func (r *Repo) HoldsStep(ctx context.Context, session string, n uint64, id cas.ID, mlen int) (bool, error) {
	key := StepKey(session, n)
	data, err := r.store.Get(ctx, key, 0, pack.ManifestPrefix(mlen))
	if errors.Is(err, cas.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", DescribeKey(key), err)
	}
	mb, err := pack.ParseManifest(data, DescribeKey(key))
	if err != nil {
		return false, nil // a short or damaged object is not the step
	}
	return len(mb) == mlen && cas.Sum(mb) == id, nil
}

// SessionStamp returns a stamp of session's marker object as the store
// reports it (size and modification time), "" if there is none. The
// marker is written before a session's first step, so a store wiped and
// rebuilt at the same place, or a session removed, collected and created
// again, has a new stamp (to the store's timestamp resolution: a second
// on S3, finer on a local directory). It costs one HEAD request.
func (r *Repo) SessionStamp(ctx context.Context, session string) (string, error) {
	info, err := r.store.Stat(ctx, SessionKey(session))
	if errors.Is(err, cas.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("stat marker of %s: %w", session, err)
	}
	return fmt.Sprintf("%d:%d", info.Size, info.ModTime.UnixNano()), nil
}

// LocalWriter returns the process id in writer, a manifest's Writer, if
// it names a process of this host.
func LocalWriter(writer string) (pid int, ok bool) {
	host, p, ok := strings.Cut(writer, "/")
	mine, _, _ := strings.Cut(processWriter, "/")
	if !ok || host != mine {
		return 0, false
	}
	pid, err := strconv.Atoi(p)
	return pid, err == nil && pid > 0
}
