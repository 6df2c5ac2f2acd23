package manifest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/internal/lru"
)

// Reachability, shared by GC and Usage.
//
// A session's live steps are its chain from its head down to its base
// (see ReadBase), following parents across forks. A session whose
// head is below its base was removed and has no live steps. An object is
// live if it is a live step's own object or if a live step's layout names
// it (the layout names every object holding blobs the state may use, and
// writers deduplicate against all of them).

// errListed stops a listing at its first key: the listing answered.
var errListed = errors.New("listed")

// listing is one snapshot of the data objects of a store.
type listing struct {
	objects  map[string]cas.Info // steps/<s>/<n> and packs/<s>/<n>
	steps    map[string][]uint64 // session -> its step numbers, ascending
	packs    []string
	bytes    int64
	stepKeys int
	// folders are the step keys at which a folder stands (see folders),
	// in key order: the store's damage, which no commit passes. gc
	// deletes nothing while one stands; du reports its session.
	folders []string
	// blocked are the sessions whose steps the store cannot list for
	// what stands where the directory of their steps belongs (a file,
	// on a local store), with the store's error: the listing of steps/
	// shows no step of theirs, yet they may have had many. gc deletes
	// nothing while one stands (what their steps use would look
	// unused); du reports them.
	blocked []Unreadable
}

// blockedErr is the error of the first session whose steps the listing
// could not see (see listing.blocked), nil if none.
func (l *listing) blockedErr() error {
	if len(l.blocked) == 0 {
		return nil
	}
	return l.blocked[0].Err
}

// folderErr is the error of the first folder the listing found at a
// step's key, nil if it found none: gc refuses such a store, deleting
// nothing until the folder is removed.
func (l *listing) folderErr() error {
	if len(l.folders) == 0 {
		return nil
	}
	return fmt.Errorf("list steps: %w", folderError(l.folders[0]))
}

// list takes the snapshot. Everything a later mark finds live was either
// written before this listing (and is in it) or after (and is no
// candidate for deletion in this run).
func (r *Repo) list(ctx context.Context) (*listing, error) {
	l := &listing{objects: map[string]cas.Info{}, steps: map[string][]uint64{}}
	var f folders
	var odd []string // objects at the key of a session's steps directory
	err := r.listStore(ctx, stepsPrefix, "", func(i cas.Info) error {
		if rest, ok := strings.CutPrefix(i.Key, stepsPrefix); ok && i.NotObject == "" && ValidSession(rest) == nil {
			odd = append(odd, rest)
			return nil
		}
		if k, ok := f.at(i); ok {
			if _, _, step := ParseStepKey(k); step {
				// A folder where a step belongs (see folders): the
				// store's damage, which no commit passes.
				l.folders = append(l.folders, k)
				return nil
			}
		}
		if s, n, ok := ParseStepKey(i.Key); ok && ValidSession(s) == nil && i.NotObject != "" {
			// Not an object but a link or the like in a step's place
			// (see listKeys): the mark meets it as a step it cannot
			// read and deletes nothing; it is never a candidate.
			l.steps[s] = append(l.steps[s], n)
			return nil
		}
		if s, n, ok := ParseStepKey(i.Key); ok && ValidSession(s) == nil {
			l.objects[i.Key] = i
			l.steps[s] = append(l.steps[s], n)
			l.bytes += i.Size
			l.stepKeys++
			return nil
		}
		return nil // hints and base markers
	})
	if err != nil {
		return nil, fmt.Errorf("list steps: %w", err)
	}
	for _, s := range odd {
		// An object steps/<s> is no key of the layout. An S3 server
		// keeps it beside the session's steps, which the listing shows;
		// a local store keeps it as a file in place of their directory,
		// and then can list none of them: ask the store which it is.
		if err := r.listStore(ctx, sessionStepsPrefix(s), "", func(cas.Info) error { return errListed }); err != nil && !errors.Is(err, errListed) {
			l.blocked = append(l.blocked, Unreadable{Session: s, Err: fmt.Errorf("list steps of %s: %w", s, err)})
		}
	}
	err = r.listObjects(ctx, packsPrefix, "", func(i cas.Info) error {
		s, _, ok := ParsePackKey(i.Key)
		if !ok {
			s, _, _, ok = ParseSpillKey(i.Key)
		}
		if ok && ValidSession(s) == nil {
			l.objects[i.Key] = i
			l.packs = append(l.packs, i.Key)
			l.bytes += i.Size
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list packs: %w", err)
	}
	for s := range l.steps {
		ns := l.steps[s]
		sort.Slice(ns, func(i, j int) bool { return ns[i] < ns[j] })
	}
	return l, nil
}

// packInFlight reports whether key is a pack that a commit still in
// flight may name: packs/S/N, or a spill pack packs/S/N.K, where S has
// no step N or above. A commit writes its packs before its step object;
// once slot N (or any later one) is filled, a pack is live only if a
// live layout names it.
func (l *listing) packInFlight(key string) bool {
	s, n, ok := ParsePackKey(key)
	if !ok {
		s, n, _, ok = ParseSpillKey(key)
	}
	if !ok {
		return false
	}
	ns := l.steps[s]
	return len(ns) == 0 || ns[len(ns)-1] < n
}

// sessionNames returns the sessions with step objects, in name order.
func (l *listing) sessionNames() []string {
	names := make([]string, 0, len(l.steps))
	for s := range l.steps {
		names = append(names, s)
	}
	sort.Strings(names)
	return names
}

// liveSet is the result of a mark: live packs and live runs of step objects.
type liveSet struct {
	packs  map[string]uint8   // key -> level
	spills map[string]bool    // keys of spill packs
	ranges map[string][]Range // per session, merged after finish
	merged map[string]int     // per session, len(ranges) when last merged
	steps  int                // live steps read
	// removed maps each removed session whose newest step is not yet a
	// tombstone to that step's number.
	removed map[string]uint64
	// tombstoneHeads maps each session whose newest step is a tombstone
	// but whose base is not above it (a fence gc did not finish) to it.
	tombstoneHeads map[string]uint64
	// unread holds the sessions a report's mark passed over (damage):
	// every object under their keys counts as live.
	unread map[string]bool
}

func newLiveSet() *liveSet {
	return &liveSet{packs: map[string]uint8{}, spills: map[string]bool{}, ranges: map[string][]Range{},
		merged: map[string]int{}, removed: map[string]uint64{}, tombstoneHeads: map[string]uint64{}, unread: map[string]bool{}}
}

func (ls *liveSet) addStep(session string, n uint64) {
	ls.addRange(Range{Session: session, First: n, Last: n})
}

// addRange adds r to its session's ranges. They are merged as they grow,
// not only at finish: every step of a walk adds its own step and every
// range its layout names, mostly the same ones again, and kept unmerged
// they took memory in the history's length times its layout's (1.7 GB
// for du of a 100,000-step session). Merged whenever they have doubled,
// they stay within twice the live ranges, plus a little.
func (ls *liveSet) addRange(r Range) {
	rs := append(ls.ranges[r.Session], r)
	if len(rs) >= 2*ls.merged[r.Session]+mergeSlack {
		rs = mergeRanges(rs)
		ls.merged[r.Session] = len(rs)
	}
	ls.ranges[r.Session] = rs
}

// mergeSlack is how many ranges a session may gather past twice its
// merged count before they are merged again.
const mergeSlack = 256

// mergeRanges sorts rs and merges those that overlap or touch, in place.
func mergeRanges(rs []Range) []Range {
	sort.Slice(rs, func(i, j int) bool { return rs[i].First < rs[j].First })
	out := rs[:0]
	for _, r := range rs {
		if k := len(out); k > 0 && r.First <= out[k-1].Last+1 {
			if r.Last > out[k-1].Last {
				out[k-1].Last = r.Last
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

func (ls *liveSet) addLayout(l Layout) {
	for _, p := range l.Packs {
		if p.InStep {
			ls.addStep(p.Session, p.Number) // live as any step object
			continue
		}
		ls.packs[PackKey(p.Session, p.Number)] = p.Level
	}
	for _, r := range l.Steps {
		ls.addRange(r)
	}
	for _, sp := range l.Spills {
		for k := sp.First; k <= sp.Last; k++ {
			ls.spills[SpillKey(sp.Session, sp.Number, k)] = true
		}
	}
}

// finish sorts and merges the ranges so that has is a binary search.
func (ls *liveSet) finish() {
	for s, rs := range ls.ranges {
		ls.ranges[s] = mergeRanges(rs)
		ls.merged[s] = len(ls.ranges[s])
	}
}

// layout returns the live objects as one layout (after finish).
func (ls *liveSet) layout() Layout {
	var l Layout
	for key, level := range ls.packs {
		if s, n, ok := ParsePackKey(key); ok {
			l.Packs = append(l.Packs, PackRef{Session: s, Number: n, Level: level})
		}
	}
	for key := range ls.spills {
		if s, n, k, ok := ParseSpillKey(key); ok {
			l.Spills = append(l.Spills, SpillRef{Session: s, Number: n, First: k, Last: k})
		}
	}
	sort.Slice(l.Spills, func(i, j int) bool {
		a, b := l.Spills[i], l.Spills[j]
		return a.Session < b.Session || a.Session == b.Session && (a.Number < b.Number || a.Number == b.Number && a.First < b.First)
	})
	sessions := make([]string, 0, len(ls.ranges))
	for s := range ls.ranges {
		sessions = append(sessions, s)
	}
	sort.Strings(sessions)
	for _, s := range sessions {
		l.Steps = append(l.Steps, ls.ranges[s]...)
	}
	return l
}

// has reports whether the object at key is live.
func (ls *liveSet) has(key string) bool {
	if len(ls.unread) > 0 && ls.unread[keySession(key)] {
		return true
	}
	if s, n, ok := ParseStepKey(key); ok {
		rs := ls.ranges[s]
		i := sort.Search(len(rs), func(i int) bool { return rs[i].Last >= n })
		return i < len(rs) && rs[i].First <= n
	}
	if ls.spills[key] {
		return true
	}
	_, live := ls.packs[key]
	return live
}

// each calls fn for every object of l that ls has (after finish), as
// has would find them, in time in ls's live objects, not in l's (in l's
// when a session could not be read: every object of it counts as live).
func (ls *liveSet) each(l *listing, fn func(key string, info cas.Info)) {
	if len(ls.unread) > 0 {
		for key, info := range l.objects {
			if ls.has(key) {
				fn(key, info)
			}
		}
		return
	}
	for s, rs := range ls.ranges {
		ns := l.steps[s]
		for _, r := range rs {
			lo := sort.Search(len(ns), func(i int) bool { return ns[i] >= r.First })
			for _, n := range ns[lo:] {
				if n > r.Last {
					break
				}
				key := StepKey(s, n)
				if info, ok := l.objects[key]; ok {
					fn(key, info)
				}
			}
		}
	}
	for key := range ls.packs {
		if info, ok := l.objects[key]; ok {
			fn(key, info)
		}
	}
	for key := range ls.spills {
		if info, ok := l.objects[key]; ok {
			fn(key, info)
		}
	}
}

// chainReader reads manifests for a mark, verifying each against the
// hash its child recorded; heads are verified by their object trailer.
type chainReader struct {
	r *Repo
	// cache keeps the steps read last: a head is read twice, and du
	// walks the history forks share once per fork. It is bounded: a
	// cache of every step read held a whole store's manifests (and,
	// through their records, their objects) at once.
	cache *lru.Cache[string, *Step]
}

// chainCacheSteps bounds the steps a chainReader keeps.
const chainCacheSteps = 1 << 12

func newChainReader(r *Repo) *chainReader {
	return &chainReader{r: r, cache: lru.New[string, *Step](chainCacheSteps)}
}

// headerPrefix is how much of a step object a mark reads first; the
// manifest and index of almost every step fit.
const headerPrefix = 64 << 10

func (cr *chainReader) read(ctx context.Context, session string, n uint64, want *cas.ID) (*Step, error) {
	key := StepKey(session, n)
	st, _ := cr.cache.Get(key)
	if st == nil {
		// Straight from the store, never from the repo's cache: a
		// removed session's newest step may have become a tombstone.
		// Every read is bounded by MaxObjectBytes (I6).
		var (
			obj *pack.Object
			b   []byte
			err error
		)
		if want == nil {
			// Nothing pins a head's hash: verify the whole object.
			if b, err = cr.r.read(ctx, key, -1); err == nil {
				obj, err = pack.Parse(b, DescribeKey(key))
			}
		} else if b, err = cr.r.read(ctx, key, headerPrefix); err == nil {
			obj, err = pack.ParseHeader(b, DescribeKey(key))
			if errors.Is(err, pack.ErrShort) {
				if b, err = cr.r.read(ctx, key, -1); err == nil {
					obj, err = pack.Parse(b, DescribeKey(key))
				}
			}
		}
		if err != nil {
			return nil, err
		}
		if st, err = stepFromObject(key, obj, session, n); err != nil {
			return nil, err
		}
		cr.cache.Put(key, st, 1)
	}
	if want != nil && st.ID != *want {
		return nil, fmt.Errorf("%w: %s: manifest hashes to %s, but its child names %s", cas.ErrCorrupt, DescribeKey(key), st.ID.Short(), want.Short())
	}
	return st, nil
}

// liveChain calls fn for each live step of session: from head down to
// floor, across forks. It stops early where seen says a walk with a floor
// at or below this one already went (seen may be nil).
func (cr *chainReader) liveChain(ctx context.Context, session string, head, floor uint64, seen map[string]uint64, fn func(*Step) error) error {
	n, want := head, (*cas.ID)(nil)
	for n >= floor && n > 0 {
		key := StepKey(session, n)
		if seen != nil {
			if f, ok := seen[key]; ok && f <= floor {
				return nil
			}
			seen[key] = floor
		}
		st, err := cr.read(ctx, session, n, want)
		if want != nil && errors.Is(err, cas.ErrNotFound) {
			// A later step names it as its parent, and the walk ends at
			// the base: it is lost, not pruned.
			return &lostError{key: key, by: namedAsParent, err: err}
		}
		if err != nil {
			return err
		}
		if err := fn(st); err != nil {
			return err
		}
		if st.Parent == nil {
			return nil
		}
		id := st.Parent.ID
		session, n, want = st.Parent.Session, st.Parent.Number, &id
	}
	return nil
}

// lostError is an object the store does not hold though another names
// it (a step its child, a layout the objects of a step's state): damage
// (cas.ErrCorrupt), and still the store's cas.ErrNotFound.
type lostError struct {
	key string
	by  string // what names it: "a later step names it as its parent"
	err error
}

func (e *lostError) Error() string { return DescribeKey(e.key) + " is missing, though " + e.by }

func (e *lostError) Unwrap() []error { return []error{cas.ErrCorrupt, e.err} }

// Ways an object is named, for lostError.
const (
	namedAsParent = "a later step names it as its parent"
	namedByState  = "a step's state has data in it"
)

// mark walks every live session of l and returns what is live, with each
// session's base. Any step it cannot read aborts the mark: a sweep after
// an incomplete mark could delete live data. A report that deletes
// nothing (du) passes damaged: a session the store's damage keeps from
// being read (isDamage) is then handed to it and passed over, and
// every object under its own keys counts as live (unread), since what it
// uses is unknown.
func (r *Repo) mark(ctx context.Context, l *listing, perStep func(root string, st *Step), damaged func(session string, err error)) (*liveSet, map[string]uint64, error) {
	ls := newLiveSet()
	bases := map[string]uint64{}
	cr := newChainReader(r)
	seen := map[string]uint64{}
	for _, s := range l.sessionNames() {
		what, err := r.markSession(ctx, l, s, ls, bases, cr, seen, perStep)
		if err != nil && damaged != nil && isDamage(err) && ctx.Err() == nil {
			ls.unread[s] = true
			damaged(s, err)
			continue
		}
		if err != nil && what != "" {
			err = fmt.Errorf("%s %s: %w", what, s, err)
		}
		if err != nil {
			return nil, nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
	}
	ls.finish()
	return ls, bases, nil
}

// isDamage says err is the store's damage: an object corrupt, lost (a
// step or pack a live step's history or layout needs is not there), or
// something that is no object where one belongs (a local store's
// directory or link at a step's key, as verify reports it).
func isDamage(err error) bool {
	var ne *cas.NotObjectError
	return errors.Is(err, cas.ErrCorrupt) || errors.Is(err, cas.ErrNotFound) || errors.As(err, &ne)
}

// markSession is mark's walk of session s. An error comes with what the
// walk was doing ("mark live steps of"), for mark to say with the session.
func (r *Repo) markSession(ctx context.Context, l *listing, s string, ls *liveSet, bases map[string]uint64, cr *chainReader, seen map[string]uint64, perStep func(root string, st *Step)) (what string, err error) {
	ns := l.steps[s]
	head := ns[len(ns)-1]
	base, err := r.ReadBase(ctx, s)
	if err != nil {
		return "", err
	}
	bases[s] = base
	// Straight from the store: a removed session's newest step may
	// have become a tombstone since the listing.
	newest, err := cr.read(ctx, s, head, nil)
	if err != nil {
		if head < base {
			return "read the newest step of removed session", err
		}
		return "mark live steps of", err
	}
	if head < base {
		// The base was read after the listing: a writer may have
		// committed above head since and pruned up to its new steps
		// (ReadHead's rule, belowBase). If not, the session was
		// removed: its newest slot is a tombstone (gc's fence, see
		// GC), or gets one above it before anything is deleted, so
		// that no writer still building on its last step can
		// acknowledge a step, and no key is reused. A base above
		// the head in any other form is damage, not a removal.
		st, now, legacy, err := r.belowBase(ctx, s, newest, base, func(n uint64) (*Step, error) { return cr.read(ctx, s, n, nil) })
		var bad *BaseError
		switch {
		case errors.As(err, &bad):
			return "", err
		case err != nil:
			return "mark live steps of", err
		}
		newest, head = st, now
		if head < base {
			if legacy {
				ls.removed[s] = head
			} else {
				ls.addStep(s, head)
			}
			return "", nil
		}
	}
	if IsTombstone(newest.Manifest) {
		ls.addStep(s, head)
		ls.tombstoneHeads[s] = head
		return "", nil
	}
	walkSeen := seen
	if perStep != nil {
		walkSeen = nil // attribution needs every root's whole chain
	}
	err = cr.liveChain(ctx, s, head, base, walkSeen, func(st *Step) error {
		ls.addStep(st.Session, st.Number)
		ls.addLayout(st.Layout)
		ls.steps++
		if perStep != nil {
			perStep(s, st)
		}
		return nil
	})
	if err != nil {
		return "mark live steps of", err
	}
	return "", nil
}

// removal says how a session whose newest step (head, with manifest
// newest) is below its base was removed, or that it was not and its base
// marker is damaged. Only what a cairn removal writes counts:
//
//   - a tombstone in the newest slot: Remove (and gc's fence) put one
//     above the last step and set the base above it; the oldest gc
//     replaced the newest step by one, below the base rm had set;
//   - a newest step that is no tombstone, with the base exactly one
//     above it: rm of a cairn that only raised the base (legacy is true;
//     gc fences such a session before deleting anything of it).
//
// Any other base above the head (a marker some other program wrote, a
// number far past the head) would have gc delete a session's live steps
// on the word of a damaged marker (I5): it is cas.ErrCorrupt.
//
// gc, verify and every reader of a head (Repo.ReadHead) decide by this
// one rule, so none of them calls removed what another calls damaged.
func removal(session string, head, base uint64, newest *Manifest) (legacy bool, err error) {
	switch {
	case IsTombstone(newest):
		return false, nil
	case base == head+1:
		return true, nil
	}
	return false, &BaseError{Session: session, Base: base, Head: head}
}

// BaseError reports a session whose base marker is above its newest step
// in a form no removal writes (see removal): the marker is damaged, and
// the session is neither removed nor pruned. It wraps cas.ErrCorrupt and
// speaks in session and step numbers, naming no store key.
type BaseError struct {
	Session    string
	Base, Head uint64 // what the marker says; the newest step stored
}

func (e *BaseError) Error() string {
	return fmt.Sprintf("%v: session %s: its base marker says step %d but its newest step is %d, which is neither a removal nor a prune",
		cas.ErrCorrupt, e.Session, e.Base, e.Head)
}

func (e *BaseError) Unwrap() error { return cas.ErrCorrupt }

// missing returns, in key order, the objects that the live set (after
// finish) names but the listing lacks: live step objects and the packs
// and step objects live layouts name. Every one of them was written
// before the step that names it, and gc never deletes a named object, so
// on a sound store there is none; one that is missing is damage, and a
// sweep beside it would only hide that. A range's gaps are found by
// searching the listing, never by counting through the range, whose
// bounds come from the store.
func (l *listing) missing(ls *liveSet) []string {
	var out []string
	const most = 10
	for s, rs := range ls.ranges {
		ns := l.steps[s]
		for _, r := range rs {
			lo := sort.Search(len(ns), func(i int) bool { return ns[i] >= r.First })
			hi := sort.Search(len(ns), func(i int) bool { return ns[i] > r.Last })
			if uint64(hi-lo) == r.Last-r.First+1 {
				continue
			}
			j := lo
			for n := r.First; n <= r.Last && len(out) < most*2; n++ {
				if j < hi && ns[j] == n {
					j++
					continue
				}
				out = append(out, StepKey(s, n))
			}
		}
	}
	for key := range ls.packs {
		if _, ok := l.objects[key]; !ok {
			out = append(out, key)
		}
	}
	for key := range ls.spills {
		if _, ok := l.objects[key]; !ok {
			out = append(out, key)
		}
	}
	sort.Strings(out)
	return out
}
