package manifest

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/manifest/tree"
)

// SessionUsage is what one session costs.
type SessionUsage struct {
	Session string
	// Steps is the number of live steps in its history (forks count the
	// history they share with their origin).
	Steps int
	// Objects and StoredBytes: the data objects its live steps use.
	Objects     int
	StoredBytes int64
	// UniqueBytes are in objects no other session uses; SharedBytes in
	// objects that other sessions use too. Removing the session would
	// free at most UniqueBytes.
	UniqueBytes int64
	SharedBytes int64
	// LogicalBytes is what its live steps' states would take stored in
	// full, one copy per step: the raw bytes of every blob and node each
	// state reaches.
	LogicalBytes int64
	// DedupRatio is LogicalBytes / StoredBytes.
	DedupRatio float64
}

// Usage is what a workspace costs.
type Usage struct {
	Sessions []SessionUsage
	// Objects and Bytes count every data object (step objects and packs).
	Objects int
	Bytes   int64
	// Live* count those some live step uses; Garbage* the rest, which GC
	// will delete.
	LiveObjects    int
	LiveBytes      int64
	GarbageObjects int
	GarbageBytes   int64
	// LogicalBytes sums the sessions' logical bytes; DedupRatio is it
	// over LiveBytes.
	LogicalBytes int64
	DedupRatio   float64
	// Unreadable are the sessions the store's damage kept Usage from
	// reading, in name order: left out of Sessions, their objects
	// counted as live (what they share with others is unknown).
	Unreadable []Unreadable
}

// Unreadable is a session a report passed over, and why: an error
// matching cas.ErrCorrupt.
type Unreadable struct {
	Session string
	Err     error
}

// Usage measures stored bytes per session and for the workspace. With
// names it reports only those sessions (the workspace totals still cover
// everything). It reads every live step's manifest and, for the logical
// sizes, the objects its state uses: a cost like Verify's. A session the
// store's damage keeps from being read does not hide the others: it is
// listed in Unreadable.
func (r *Repo) Usage(ctx context.Context, names ...string) (*Usage, error) {
	for _, n := range names {
		if err := ValidSession(n); err != nil {
			return nil, fmt.Errorf("usage: %w", err)
		}
	}
	l, err := r.list(ctx)
	if err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	perRoot := map[string]*liveSet{}
	// Each step's logical size is measured as the mark reads the step,
	// through a View of its own layout, so that what the pass holds is
	// bounded by the Repo's caches and not by the history: an index of
	// the union of a session's layouts (every blob of every object a
	// step ever used) and the list of its steps took most of the 1.1 GB
	// that du of a 100,000-step session needed.
	logical := map[string]int64{}
	dataErr := map[string]error{} // a session whose states' data could not be read
	sizes := newNodeSizes(maxNodeSizes)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var fatal error // an error that ends the pass: the mark is cancelled
	var damaged []Unreadable
	live, _, err := r.mark(ctx, l, func(root string, st *Step) {
		ls := perRoot[root]
		if ls == nil {
			ls = newLiveSet()
			perRoot[root] = ls
		}
		ls.addStep(st.Session, st.Number)
		ls.addLayout(st.Layout)
		ls.steps++
		if dataErr[root] != nil || fatal != nil {
			return
		}
		n, err := r.stepLogicalBytes(ctx, st, sizes)
		switch {
		case err == nil:
			logical[root] += n
		case isDamage(err) && ctx.Err() == nil:
			// Its manifests read, but data its states use does not:
			// passed over like a session whose history cannot be
			// read (its objects stay counted as live).
			dataErr[root] = fmt.Errorf("data of %s: %w", root, err)
		default:
			fatal = fmt.Errorf("usage of %s: %w", root, err)
			cancel()
		}
	}, func(session string, err error) {
		// What was attributed before the damage was found is dropped.
		delete(perRoot, session)
		delete(logical, session)
		delete(dataErr, session)
		damaged = append(damaged, Unreadable{Session: session, Err: fmt.Errorf("history of %s: %w", session, err)})
	})
	if fatal != nil {
		return nil, fatal
	}
	if err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	// A folder where a step belongs is its session's damage, reported
	// as verify does, per session: the session is passed over (its
	// objects stay counted as live), the others measured.
	for _, k := range l.folders {
		s, _, _ := ParseStepKey(k)
		switch {
		case perRoot[s] != nil && dataErr[s] == nil:
			dataErr[s] = folderError(k)
		case perRoot[s] == nil && !slices.ContainsFunc(damaged, func(d Unreadable) bool { return d.Session == s }):
			damaged = append(damaged, Unreadable{Session: s, Err: folderError(k)})
		}
	}
	// So is a session whose steps the store cannot list: it shows no
	// step, so the mark never met it.
	for _, b := range l.blocked {
		if perRoot[b.Session] == nil && !slices.ContainsFunc(damaged, func(d Unreadable) bool { return d.Session == b.Session }) {
			damaged = append(damaged, b)
		}
	}
	u := &Usage{Objects: len(l.objects), Bytes: l.bytes, Unreadable: damaged}
	users := map[string]int{} // object key -> number of sessions using it
	for _, ls := range perRoot {
		ls.finish()
	}
	for key, info := range l.objects {
		if !live.has(key) {
			u.GarbageObjects++
			u.GarbageBytes += info.Size
			continue
		}
		u.LiveObjects++
		u.LiveBytes += info.Size
	}
	// Each session's own objects, found from its live set, not by asking
	// it of every object of the store: that took time in the sessions
	// times the objects (19 s for 5,000 sessions of 3 steps).
	for _, ls := range perRoot {
		ls.each(l, func(key string, _ cas.Info) { users[key]++ })
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	roots := make([]string, 0, len(perRoot))
	for r := range perRoot {
		roots = append(roots, r)
	}
	sort.Strings(roots)
	for _, root := range roots {
		ls := perRoot[root]
		su := SessionUsage{Session: root, Steps: ls.steps}
		ls.each(l, func(key string, info cas.Info) {
			su.Objects++
			su.StoredBytes += info.Size
			if users[key] > 1 {
				su.SharedBytes += info.Size
			} else {
				su.UniqueBytes += info.Size
			}
		})
		if err := dataErr[root]; err != nil {
			u.Unreadable = append(u.Unreadable, Unreadable{Session: root, Err: err})
			continue
		}
		su.LogicalBytes = logical[root]
		if su.StoredBytes > 0 {
			su.DedupRatio = float64(su.LogicalBytes) / float64(su.StoredBytes)
		}
		u.LogicalBytes += su.LogicalBytes
		if len(want) == 0 || want[root] {
			su := su
			u.Sessions = append(u.Sessions, su)
		}
	}
	sort.Slice(u.Unreadable, func(i, j int) bool { return u.Unreadable[i].Session < u.Unreadable[j].Session })
	for n := range want {
		if perRoot[n] == nil && !live.unread[n] {
			return nil, fmt.Errorf("usage of %s: %w", n, ErrNoSession)
		}
	}
	if u.LiveBytes > 0 {
		u.DedupRatio = float64(u.LogicalBytes) / float64(u.LiveBytes)
	}
	return u, nil
}

// maxNodeSizes bounds the node sizes a du pass remembers (about 64
// bytes each): past it they are dropped, all at once, and measured again
// by the steps that follow, which read those nodes through the caches.
const maxNodeSizes = 1 << 18

// nodeSizes remembers the logical size of the subtrees measured, so that
// a subtree a step shares with the one measured before it is measured
// once. It is bounded: see maxNodeSizes.
type nodeSizes struct {
	m   map[cas.ID]int64
	max int
}

func newNodeSizes(max int) *nodeSizes { return &nodeSizes{m: map[cas.ID]int64{}, max: max} }

func (s *nodeSizes) get(id cas.ID) (int64, bool) {
	n, ok := s.m[id]
	return n, ok
}

func (s *nodeSizes) put(id cas.ID, n int64) {
	if len(s.m) >= s.max {
		clear(s.m)
	}
	s.m[id] = n
}

// stepLogicalBytes returns the full size of st's state: the raw bytes of
// every blob and node it reaches, read through a View of its layout.
// sizes holds subtrees already measured.
func (r *Repo) stepLogicalBytes(ctx context.Context, st *Step, sizes *nodeSizes) (int64, error) {
	if st.Root.Kind == tree.Inline {
		return int64(len(st.Root.Data)), nil
	}
	v, err := r.View(ctx, st.Layout)
	if err != nil {
		return 0, fmt.Errorf("measure %s@%d: %w", st.Session, st.Number, err)
	}
	maxDepth := r.depthBound()
	tr := &tree.Reader{Src: v, Limits: tree.Limits{MaxDepth: maxDepth}}
	var size func(ref tree.Ref, depth int) (int64, error)
	size = func(ref tree.Ref, depth int) (int64, error) {
		if depth > maxDepth {
			// As show and checkout refuse it: a deep tree must not make
			// du recurse (and allocate) without bound.
			return 0, &tree.LimitError{Limit: "MaxDepth", Max: int64(maxDepth), What: "tree nesting", Unit: "levels"}
		}
		switch ref.Kind {
		case tree.Inline:
			return 0, nil // counted in its parent node's bytes
		case tree.Blob:
			return ref.Size, nil
		}
		if n, ok := sizes.get(ref.ID); ok {
			return n, nil
		}
		_, e, ok := v.locate(ref.ID)
		if !ok {
			return 0, fmt.Errorf("%w: node %s is not in any object of the step's layout", cas.ErrCorrupt, ref.ID.Short())
		}
		node, err := tr.Node(ctx, ref)
		if err != nil {
			return 0, err
		}
		total := e.RawLen
		for _, e := range node.Entries {
			n, err := size(e.Ref, depth+1)
			if err != nil {
				return 0, err
			}
			total += n
		}
		sizes.put(ref.ID, total)
		return total, nil
	}
	n, err := size(st.Root, 0)
	if err != nil {
		return 0, fmt.Errorf("measure %s@%d: %w", st.Session, st.Number, err)
	}
	return n, nil
}
