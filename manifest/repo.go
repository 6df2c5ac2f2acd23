package manifest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/manifest/tree"
)

// ErrNoSession reports a session with no steps.
var ErrNoSession = errors.New("session has no steps")

// DefaultMaxObjectBytes is the default bound on the size of one object read.
const DefaultMaxObjectBytes = 4 << 30

// defaultCacheBytes is the default size of a Repo's object cache.
const defaultCacheBytes = 256 << 20

// Repo is a workspace's store seen through its layout: every read and
// write of step objects, packs, hints, markers, tombstones, base markers
// and gc state goes through it, and every object it reads is bounded by
// MaxObjectBytes (I6). A Repo sees one workspace: its store is confined
// to the workspace's directory or prefix, and nothing it reads or dedups
// against comes from outside it (I7). It is safe for concurrent use.
type Repo struct {
	store cas.Store
	// maxObjectBytes bounds the size of one object read from the store
	// (0: DefaultMaxObjectBytes); a larger one is an error wrapping
	// tree.ErrLimit, not an allocation. maxDepth bounds the nesting of
	// trees that gc, usage and verify walk (0: tree.DefaultLimits.MaxDepth),
	// maxForkLevels the forks of forks HistoryStep passes through (0:
	// MaxForkLevels). Their setters may run beside reads (a workspace's
	// SetLimits): each read takes the bound it finds as it starts.
	maxObjectBytes atomic.Int64
	maxDepth       atomic.Int64
	maxForkLevels  atomic.Int64
	// ForkWait bounds how long a step put beside a fork to its session's
	// name waits for the fork to end (AwaitForks; 0: DefaultForkWait).
	ForkWait time.Duration
	cache    *objectCache
	// spills caches whole spill packs apart from cache: a reader of a
	// large file goes through them one after another, so a couple
	// suffice, and they never push small objects out.
	spills *objectCache
	// reads keeps what reads learned of the objects' blobs (View).
	reads *readIndex
	// blobs keeps the stored bytes of blobs read alone (rangedBlob).
	blobs *blobCache
	// local, if set, keeps copies of the objects commits write, for the
	// compactions of later processes (UseLocalObjects).
	local atomic.Pointer[localRef] // UseLocalObjects; nil: none
}

// spillCacheBytes bounds the cache of spill packs: two of them (a pack
// exceeds SpillThreshold by at most one chunk and its index).
const spillCacheBytes = 2 * (SpillThreshold + 1<<20)

// spillHeaderPrefix is how much of a spill pack an index load reads
// first: the index of maxSpillBlobs blobs fits.
const spillHeaderPrefix = 256 << 10

// NewRepo returns a Repo over store that caches up to cacheBytes of
// whole objects in memory (0: 256 MiB).
func NewRepo(store cas.Store, cacheBytes int64) *Repo {
	if cacheBytes <= 0 {
		cacheBytes = defaultCacheBytes
	}
	return &Repo{store: store, cache: newObjectCache(cacheBytes), spills: newObjectCache(spillCacheBytes),
		reads: newReadIndex(readBounds(cacheBytes)), blobs: newBlobCache(blobCacheBytes)}
}

// SetCacheLimit empties the object cache and bounds it to max bytes (0:
// the default 256 MiB), and bounds what reads learned of the objects'
// blobs (View) to a share of it (readBounds), keeping what fits. Call it
// before the Repo is used: long walks that seldom revisit an object
// (exports) keep memory small with a small cache. Called beside reads,
// it is safe: they read again what it dropped.
func (r *Repo) SetCacheLimit(max int64) {
	if max <= 0 {
		max = defaultCacheBytes
	}
	r.cache.reset(max)
	r.reads.setBounds(readBounds(max))
}

// DropCaches empties the Repo's caches of objects, of what its reads
// learned of them and of blobs read alone, releasing their memory
// (Workspace.Close). The Repo still works, reading again what it needs.
func (r *Repo) DropCaches() {
	r.cache.clear()
	r.spills.clear()
	r.reads.clear()
	r.blobs.clear()
}

// SetMaxObjectBytes sets the bound on the size of one object read to
// max (0: DefaultMaxObjectBytes); a larger object is an error wrapping
// tree.ErrLimit, not an allocation. It may be called beside reads. What
// the caches hold was read under the bound before, and a reader that
// finds an object there does not read it again: a lower bound empties
// them (DropCaches), so that every object is read again under it, and
// one now over it is refused when a read's view learns its index,
// before anything of a state is written, as it would be by a Repo new
// with this bound.
func (r *Repo) SetMaxObjectBytes(max int64) {
	old := r.maxObject()
	r.maxObjectBytes.Store(max)
	if r.maxObject() < old {
		r.DropCaches()
	}
}

// Step is a step as stored: its manifest and what the step object that
// holds it says about itself.
type Step struct {
	*Manifest
	ID  cas.ID // BLAKE3 of the manifest bytes
	Key string
	// Blobs is the number of new blobs the step object carries: those
	// of its state that no older object held, without the copies a
	// compaction merged into it (Manifest.Copies).
	Blobs int
	// RawBlobBytes is their raw (uncompressed) size.
	RawBlobBytes int64
	// ManifestBytes is the size of the encoded manifest.
	ManifestBytes int64
	// Size is the step object's size in bytes (0 when only its header
	// was read).
	Size int64
}

// Pointer returns the pointer that names s.
func (s *Step) Pointer() Pointer {
	return Pointer{Session: s.Session, Number: s.Number, ID: s.ID}
}

// ReadStep reads step n of session. A missing step is cas.ErrNotFound.
func (r *Repo) ReadStep(ctx context.Context, session string, n uint64) (*Step, error) {
	key := StepKey(session, n)
	obj, err := r.object(ctx, key)
	if err != nil {
		return nil, err
	}
	st, err := stepFromObject(key, obj, session, n)
	if err != nil {
		return nil, err
	}
	st.Size = obj.Size()
	return st, nil
}

// stepFromObject decodes the manifest of a parsed step object (whole or
// header only) and checks that it is the one its key names.
func stepFromObject(key string, obj *pack.Object, session string, n uint64) (*Step, error) {
	if obj.Kind != pack.KindStep {
		return nil, fmt.Errorf("%w: %s: not a step object", cas.ErrCorrupt, DescribeKey(key))
	}
	m, err := Decode(obj.Manifest, "the manifest of "+DescribeKey(key))
	if err != nil {
		return nil, err
	}
	if m.Session != session || m.Number != n {
		return nil, fmt.Errorf("%w: %s: manifest says %s@%d", cas.ErrCorrupt, DescribeKey(key), m.Session, m.Number)
	}
	if m.Copies > uint64(len(obj.Entries)) {
		return nil, fmt.Errorf("%w: %s: manifest counts %d copied blobs of %d", cas.ErrCorrupt, DescribeKey(key), m.Copies, len(obj.Entries))
	}
	st := &Step{Manifest: m, ID: cas.Sum(obj.Manifest), Key: key, ManifestBytes: int64(len(obj.Manifest))}
	st.countNew(obj.Entries)
	return st, nil
}

// countNew sets st.Blobs and st.RawBlobBytes from the entries of its
// object: the step's new blobs, without a compaction's copies.
func (st *Step) countNew(entries []pack.Entry) {
	fresh := entries[:uint64(len(entries))-min(st.Copies, uint64(len(entries)))]
	st.Blobs = len(fresh)
	st.RawBlobBytes = 0
	for _, e := range fresh {
		st.RawBlobBytes += e.RawLen
	}
}

// ReadPointer reads the step p names and checks its hash. A step the
// store does not hold is lost, since a step names it: cas.ErrCorrupt as
// well as cas.ErrNotFound.
func (r *Repo) ReadPointer(ctx context.Context, p Pointer) (*Step, error) {
	s, err := r.ReadStep(ctx, p.Session, p.Number)
	if errors.Is(err, cas.ErrNotFound) {
		return nil, &lostError{key: StepKey(p.Session, p.Number), by: namedAsParent, err: err}
	}
	if err != nil {
		return nil, err
	}
	if s.ID != p.ID {
		return nil, fmt.Errorf("%w: %s: manifest hashes to %s, but its child names %s", cas.ErrCorrupt, DescribeKey(s.Key), s.ID.Short(), p.ID.Short())
	}
	return s, nil
}

// landingRetries bounds how often ReadHead looks again for a head that
// a LIST named but a GET did not find; landingPause is the first pause
// between looks, doubled each time (about 0.75 s in all).
const (
	landingRetries = 4
	landingPause   = 50 * time.Millisecond
)

// ReadHead finds session's newest step and reads it: FindHeadBase, then
// ReadStep. It returns a nil step (and no error) if the session has no
// steps. A step object can be listed before a GET finds it: an object
// store may list a put that is still landing, or one whose client died
// and which the store then drops (MinIO does both). So when the listed
// head is not found, ReadHead pauses and looks again, a few times, and
// takes whatever head the store then shows; only a head that stays
// listed and unreadable is an error (cas.ErrCorrupt: the store lists a
// step it cannot serve).
//
// A head below the base is a removal only in the forms a removal writes
// (see removal, the rule gc applies too); in any other form the base
// marker is damaged, and ReadHead returns no step and a *BaseError
// (cas.ErrCorrupt), with head and base: no reader calls a live session
// removed on the word of a damaged marker, and no commit builds on it.
//
// head is the number of the step the store lists as newest, also when
// err says it cannot be read (a caller that must know where the session
// ends, readable or not, uses it); it is 0 if finding it failed.
func (r *Repo) ReadHead(ctx context.Context, session string) (st *Step, head, base uint64, err error) {
	pause := landingPause
	for try := 0; ; try++ {
		if head, base, err = r.FindHeadBase(ctx, session); err != nil || head == 0 {
			return nil, 0, base, err
		}
		st, err = r.ReadStep(ctx, session, head)
		if err == nil && head < base {
			st, head, _, err = r.belowBase(ctx, session, st, base, func(n uint64) (*Step, error) { return r.ReadStep(ctx, session, n) })
		}
		if err == nil || !errors.Is(err, cas.ErrNotFound) {
			return st, head, base, err
		}
		if try == landingRetries {
			return nil, head, base, fmt.Errorf("%w: step %d of %s is listed but cannot be read", cas.ErrCorrupt, head, session)
		}
		select {
		case <-ctx.Done():
			return nil, head, base, ctx.Err()
		case <-time.After(pause):
		}
		pause *= 2
	}
}

// belowBase settles a session whose newest listed step, st, is below its
// base, read after the listing. A writer may have committed above st
// since and pruned up to its new steps: the steps above st say so, and
// the newest of them is the head (the base, read before them, is at most
// its number unless the session was removed since). Otherwise the
// session is removed, if its newest step and base have a form a removal
// writes (legacy as removal says), or its base marker is damaged
// (*BaseError). It returns the head step and its number; the extra LIST
// (and GET) is paid only here. read reads a step of the session:
// ReadHead's goes through the repo, gc's mark straight to the store.
// ReadHead and gc decide by this one function.
func (r *Repo) belowBase(ctx context.Context, session string, st *Step, base uint64, read func(n uint64) (*Step, error)) (_ *Step, head uint64, legacy bool, err error) {
	head = st.Number
	if !IsTombstone(st.Manifest) {
		cur, _, err := r.listHead(ctx, session, head+1)
		if err != nil {
			return nil, head, false, err
		}
		if cur > head {
			if st, err = read(cur); err != nil {
				return nil, cur, false, err
			}
			head = cur
		}
	}
	if head >= base {
		return st, head, false, nil
	}
	if legacy, err = removal(session, head, base, st.Manifest); err != nil {
		return nil, head, false, err
	}
	return st, head, legacy, nil
}

// FindHead returns the number of the newest step of session, or 0 if the
// session has none. It reads the head hint and makes one LIST from it:
// two requests, whatever the session's length.
func (r *Repo) FindHead(ctx context.Context, session string) (uint64, error) {
	head, _, err := r.findHead(ctx, session)
	return head, err
}

// FindHeadBase is FindHead that also returns the session's base (see
// ReadBase), in the same requests when the session was never pruned: the
// base marker's key sorts after every step key, so the head LIST sees
// whether it exists, and only then is it read (one more GET).
func (r *Repo) FindHeadBase(ctx context.Context, session string) (head, base uint64, err error) {
	head, marks, err := r.findHead(ctx, session)
	if err != nil {
		return 0, 0, err
	}
	if base, err = marks.base(ctx, r, session); err != nil {
		return 0, 0, err
	}
	return head, base, nil
}

func (r *Repo) findHead(ctx context.Context, session string) (head uint64, marks baseMarks, err error) {
	var hint uint64
	if b, err := r.store.Get(ctx, HintKey(session), 0, 32); err == nil {
		hint, _ = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	} else if !errors.Is(err, cas.ErrNotFound) {
		return 0, baseMarks{}, fmt.Errorf("find head of %s: %w", session, err)
	}
	head, marks, err = r.listHead(ctx, session, hint)
	if err == nil && head == 0 && hint > 0 {
		// The hinted step is gone (pruned or removed): list from the start.
		head, marks, err = r.listHead(ctx, session, 0)
	}
	return head, marks, err
}

// listHead lists session's keys from step from on: the newest step, and
// its base markers (baseMarks).
func (r *Repo) listHead(ctx context.Context, session string, from uint64) (head uint64, marks baseMarks, err error) {
	after := ""
	if from > 0 {
		after = StepKey(session, from-1)
	}
	err = r.listKeys(ctx, sessionStepsPrefix(session), after, func(i cas.Info) error {
		if s, n, ok := ParseStepKey(i.Key); ok && s == session && n > head {
			head = n
		}
		return marks.add(session, i.Key)
	})
	if err != nil {
		return 0, baseMarks{}, fmt.Errorf("find head of %s: %w", session, &unlistedError{session: session, err: err})
	}
	return head, marks, nil
}

// unlistedError is the error of a listing of a session's steps that
// failed, as the session's head is found: it says which read failed (the
// listing, not the head hint read before it), for verify to name it.
type unlistedError struct {
	session string
	err     error
}

func (e *unlistedError) Error() string { return e.err.Error() }
func (e *unlistedError) Unwrap() error { return e.err }

// maxBaseMarks bounds the base markers a listing reads: writers delete
// the superseded ones, so more is damage or hostile, not a reason to list
// (and hold) without end.
const maxBaseMarks = 1000

// baseMarks is what a listing of a session's keys found of its base
// markers: the highest of the monotonic ones (BaseKeyAt) and whether the
// older overwritten one (BaseKey) exists, which only a GET can read.
type baseMarks struct {
	top    uint64   // the highest BaseKeyAt number, 0 if none
	all    []uint64 // every BaseKeyAt number, at most maxBaseMarks
	legacy bool
}

func (m *baseMarks) add(session, key string) error {
	if key == BaseKey(session) {
		m.legacy = true
		return nil
	}
	if s, n, ok := ParseBaseKey(key); ok && s == session {
		if len(m.all) == maxBaseMarks {
			return fmt.Errorf("%w: more than %d base markers of session %s", cas.ErrCorrupt, maxBaseMarks, session)
		}
		m.all = append(m.all, n)
		m.top = max(m.top, n)
	}
	return nil
}

// listBaseMarks lists session's base markers: one LIST that starts past
// its step keys.
func (r *Repo) listBaseMarks(ctx context.Context, session string) (baseMarks, error) {
	var marks baseMarks
	err := r.listKeys(ctx, sessionStepsPrefix(session), baseListStart(session), func(i cas.Info) error {
		return marks.add(session, i.Key)
	})
	if err != nil {
		return baseMarks{}, fmt.Errorf("read the base marker of session %s: %w", session, err)
	}
	return marks, nil
}

// base settles the base the markers say: the highest, reading the older
// marker's content if there is one (one GET); 1 if there is none.
func (m baseMarks) base(ctx context.Context, r *Repo, session string) (uint64, error) {
	base := max(m.top, 1)
	if m.legacy {
		old, err := r.readLegacyBase(ctx, session)
		if err != nil {
			return 0, err
		}
		base = max(base, old)
	}
	return base, nil
}

var errStop = errors.New("stop listing")

// FirstStep returns the number of the oldest step stored for session, or
// 0 if it has none. It costs one LIST that stops at the key after the
// first step's: a listing out of order at its first key (a step handed
// over before a lower one) fails there (listStore), where stopping at
// the first would name a wrong first step, so a wrong origin of a fork,
// a history that goes down to a step said lost, or a fork's slot that
// gc takes for free. (A listing out of order further on is caught by a
// reader that goes that far; this one, read for one key, does not.)
func (r *Repo) FirstStep(ctx context.Context, session string) (uint64, error) {
	var first uint64
	err := r.listKeys(ctx, sessionStepsPrefix(session), "", func(i cas.Info) error {
		if first != 0 {
			return errStop // listStore found i in order after the first step
		}
		if s, n, ok := ParseStepKey(i.Key); ok && s == session {
			first = n
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return 0, fmt.Errorf("find first step of %s: %w", session, err)
	}
	return first, nil
}

// maxBaseLen bounds the stored base marker: a decimal uint64.
const maxBaseLen = 20

// maxBase is the highest base a marker may name: step numbers stay below
// 2^62.
const maxBase = 1 << 62

// ParseBase decodes a base marker: a decimal step number, 1..2^62, with
// no sign, spaces or leading zeros. what names the marker in errors
// ("the base marker of session S").
func ParseBase(b []byte, what string) (uint64, error) {
	if len(b) == 0 || len(b) > maxBaseLen || b[0] == '0' {
		return 0, fmt.Errorf("%w: %s is not a step number", cas.ErrCorrupt, what)
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: %s is not a step number", cas.ErrCorrupt, what)
		}
	}
	n, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil || n > maxBase {
		return 0, fmt.Errorf("%w: %s names a step number out of range", cas.ErrCorrupt, what)
	}
	return n, nil
}

// ReadBase returns the base of session: the lowest step of its history
// still kept (1 if the session was never pruned). The base marker records
// a session's retention floor: its history is its chain from the head
// down to the step numbered base, no further. Pruning raises it; removing
// a session sets it above the head. Like git's shallow file it lives
// beside the immutable manifests, whose hashes children and forks pin,
// instead of rewriting one of them.
//
// The base only rises: each prune or removal creates a marker of its own
// (BaseKeyAt), never overwrites one, and the base is the highest. A
// writer that read the session long ago and writes a lower base late
// (a prune beside another, a paused removal) cannot lower it. Every
// write puts the older, overwritten marker (BaseKey) first, so a session
// without it has base 1: one GET, as before, for a session never pruned
// or removed; for one that was, a LIST of its markers too.
func (r *Repo) ReadBase(ctx context.Context, session string) (uint64, error) {
	old, err := r.readLegacyBase(ctx, session)
	if err != nil || old == 0 {
		return max(old, 1), err
	}
	marks, err := r.listBaseMarks(ctx, session)
	if err != nil {
		return 0, err
	}
	return max(old, marks.top), nil
}

// readLegacyBase reads the base marker older cairns overwrote (BaseKey),
// 0 if there is none.
func (r *Repo) readLegacyBase(ctx context.Context, session string) (uint64, error) {
	key := BaseKey(session)
	// At most one byte past the longest marker: a longer object is
	// refused without reading it (I6).
	b, err := r.store.Get(ctx, key, 0, maxBaseLen+1)
	if errors.Is(err, cas.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", DescribeKey(key), err)
	}
	return ParseBase(b, "the base marker of session "+session)
}

// CheckBaseMarkers reports, as cas.ErrCorrupt, base markers of session
// that ReadBase does not read: markers of their own (BaseKeyAt) without
// the older marker (BaseKey) that every prune or removal writes first,
// which is then lost. Readers that list the markers and those that read
// the older one first then disagree on where the history starts.
func (r *Repo) CheckBaseMarkers(ctx context.Context, session string) error {
	marks, err := r.listBaseMarks(ctx, session)
	if err != nil {
		return err
	}
	if marks.top > 0 && !marks.legacy {
		return fmt.Errorf("%w: %s lacks the form every prune or removal writes first, while its newer form says step %d, so readers disagree on where the history starts; restore the older form holding %d, or delete the newer one",
			cas.ErrCorrupt, DescribeKey(BaseKey(session)), marks.top, marks.top)
	}
	return nil
}

// BaseMarkerKey returns the key of the marker that sets session's base
// (the highest), for reports that name the object to repair; BaseKey if
// no other says more.
func (r *Repo) BaseMarkerKey(ctx context.Context, session string) string {
	marks, err := r.listBaseMarks(ctx, session)
	if err != nil || marks.top == 0 {
		return BaseKey(session)
	}
	if marks.legacy {
		if old, err := r.readLegacyBase(ctx, session); err != nil || old > marks.top {
			return BaseKey(session)
		}
	}
	return BaseKeyAt(session, marks.top)
}

// WriteBase raises the base of session to n (see ReadBase): it writes
// the older marker, for cairns that read only that one (and, being there,
// tells ReadBase to look for the others), then creates n's own. Markers
// below the highest are then deleted: they no longer say anything.
func (r *Repo) WriteBase(ctx context.Context, session string, n uint64) error {
	_, err := r.writeBase(ctx, session, n)
	return err
}

// writeBase is WriteBase; created reports whether n's marker is this
// call's (not one another writer had made).
func (r *Repo) writeBase(ctx context.Context, session string, n uint64) (created bool, _ error) {
	legacy := BaseKey(session)
	if err := r.store.Put(ctx, legacy, []byte(strconv.FormatUint(n, 10)), cas.PutOptions{}); err != nil {
		return false, fmt.Errorf("write %s: %w", DescribeKey(legacy), err)
	}
	key := BaseKeyAt(session, n)
	err := r.store.Put(ctx, key, nil, cas.PutOptions{IfAbsent: true})
	if err != nil && !errors.Is(err, cas.ErrExists) {
		return false, fmt.Errorf("write %s: %w", DescribeKey(key), err)
	}
	created = err == nil
	marks, err := r.listBaseMarks(ctx, session)
	if err != nil {
		return created, nil // the base is set; the old markers wait for the next write
	}
	top := max(marks.top, n)
	for _, m := range marks.all {
		if m < top {
			if err := r.store.Delete(ctx, BaseKeyAt(session, m)); err != nil && !errors.Is(err, cas.ErrNotFound) {
				return created, nil // as above
			}
		}
	}
	return created, nil
}

// lowerOwnBase takes back the base n that a fork set on its new session,
// which had base was before, when the fork lost before its step's put:
// the one case a base goes down. Forks to one name go one at a time and
// a first step waits for them (AwaitForks), so the marker is the fork's
// own (created: it made it) and nothing else raised the name's base
// meanwhile. Best effort: a failure leaves the base up, as before.
func (r *Repo) lowerOwnBase(ctx context.Context, session string, n, was uint64, created bool) {
	if created {
		if err := r.store.Delete(ctx, BaseKeyAt(session, n)); err != nil && !errors.Is(err, cas.ErrNotFound) {
			return
		}
	}
	legacy := BaseKey(session)
	if was <= 1 {
		_ = r.store.Delete(ctx, legacy)
		return
	}
	_ = r.store.Put(ctx, legacy, []byte(strconv.FormatUint(was, 10)), cas.PutOptions{})
}

// Sessions calls fn with the name of every session that has a marker, in
// name order. A marker a local store found no object in the place of (a
// link, say: cas.Info.NotObject) names its session all the same: the
// session is its steps, which are read, or reported damaged, as any
// session's are; verify names the marker.
func (r *Repo) Sessions(ctx context.Context, fn func(name string) error) error {
	return r.SessionsPrefixed(ctx, "", fn)
}

// SessionsPrefixed is Sessions limited to the names that start with
// prefix, which the store's listing selects: a walk over a few sessions
// of a large store lists only theirs. A prefix no session name can start
// with (a '.' first, a '/') lists nothing.
func (r *Repo) SessionsPrefixed(ctx context.Context, prefix string, fn func(name string) error) error {
	if prefix != "" && ValidSession(prefix) != nil {
		return nil
	}
	// Not listKeys, which passes over a place holding no object: a
	// session whose marker is a link vanished from every listing.
	return r.listStore(ctx, sessionsPrefix+prefix, "", func(i cas.Info) error {
		name := strings.TrimPrefix(i.Key, sessionsPrefix)
		if ValidSession(name) != nil {
			return nil
		}
		return fn(name)
	})
}

// StepSessions calls fn with the name of every session that has step
// objects (or a hint), in name order, whether or not it has a marker.
// It lists every key under steps/: for verify, not for routine use.
func (r *Repo) StepSessions(ctx context.Context, fn func(name string) error) error {
	last := ""
	return r.listKeys(ctx, stepsPrefix, "", func(i cas.Info) error {
		name, ok := stepsKeySession(i.Key)
		if !ok || name == last {
			return nil
		}
		last = name
		return fn(name)
	})
}

// listStore is the store's List, held to its contract: every key it
// hands fn starts with prefix and sorts after startAfter and after the
// key before it. Every listing of the layout goes through it. A store
// that breaks the contract (a broken or hostile S3-compatible server:
// keys unsorted, repeated, or outside the prefix) is damaged, and the
// listing fails with ErrCorrupt at the first such key: a reader that
// took it as it came could pass over a live step (head discovery takes
// the last key listed, FirstStep the first), count one twice (du), or
// be led round for ever; gc deletes nothing.
func (r *Repo) listStore(ctx context.Context, prefix, after string, fn func(cas.Info) error) error {
	last := after
	return r.store.List(ctx, prefix, after, func(i cas.Info) error {
		var what string
		switch {
		case !strings.HasPrefix(i.Key, prefix):
			what = "a key outside it"
		case i.Key <= after:
			what = "a key before the one it was asked to list after"
		case i.Key == last:
			what = "a key twice"
		case i.Key < last:
			what = "keys out of order"
		}
		if what != "" {
			return &ListingError{Prefix: prefix, What: what}
		}
		last = i.Key
		return fn(i)
	})
}

// ListingError is a store's listing that broke the store's contract
// (see cas.Store.List): the store is damaged, or its server is no
// S3-compatible one. It is cas.ErrCorrupt.
type ListingError struct {
	Prefix string // the listing's prefix
	What   string // what it gave: "keys out of order", "a key twice", "a key outside it"
}

func (e *ListingError) Error() string {
	return fmt.Sprintf("%v: the store's listing of %s gave %s (a store lists each key once, in order, under the prefix asked for): its server is broken or not S3-compatible",
		cas.ErrCorrupt, DescribePrefix(e.Prefix), e.What)
}

// Unwrap makes errors.Is(err, cas.ErrCorrupt) true.
func (e *ListingError) Unwrap() error { return cas.ErrCorrupt }

// listKeys is the store's List as the layout's readers see it. An entry
// that is no object (cas.Info.NotObject: a link, a directory, a pipe that
// a local store found where an object belongs) is passed over, unless it
// stands at a step's key: there it holds the step's place as a step that
// cannot be read. Head discovery finds it, a reader of it is refused in
// words (the store says what stands there), gc's mark refuses the
// session as damaged and deletes nothing, and no commit takes the slot.
// An S3 folder (cas.Info.Apart) is passed over wherever it stands: no
// read of the key meets it. Verify names every such entry (see
// notObjects), and gc and du refuse a store with one at a step's key
// (see list).
func (r *Repo) listKeys(ctx context.Context, prefix, after string, fn func(cas.Info) error) error {
	return r.listStore(ctx, prefix, after, func(i cas.Info) error {
		if i.NotObject != "" {
			if _, _, ok := ParseStepKey(i.Key); !ok || i.Apart {
				return nil
			}
		}
		return fn(i)
	})
}

// folders finds, in one listing in key order, a folder standing at the
// key of an object of the layout (a step, a pack, a hint, a marker, a
// pin) where no object stands: an S3 folder marker (cas.Info.Apart), or,
// at a key under steps/ or packs/, keys that go on from it with "/"
// (objects under a step's name; a directory that is not empty, on a
// local store). A store that keeps objects as files (a local directory,
// versitygw) refuses to create the object there; a reader of the key
// finds nothing. A key of the layout listed as an object, which some S3
// servers keep beside such a folder, is no folder's. Keys under a
// marker's, a pin's or gc's key are another workspace's, nested in this
// one's prefix (sessions/x as its prefix), not a folder in this one's.
type folders struct {
	listed []string // the listed keys that begin the last one listed
}

// at returns the key of the object of the layout at which the entry i
// shows a folder, if it shows one.
func (f *folders) at(i cas.Info) (string, bool) {
	for n := len(f.listed); n > 0 && !strings.HasPrefix(i.Key, f.listed[n-1]); n = len(f.listed) {
		f.listed = f.listed[:n-1]
	}
	if i.NotObject != "" {
		return i.Key, i.Apart && layoutKey(i.Key)
	}
	f.listed = append(f.listed, i.Key)
	for j := 0; j < len(i.Key); j++ {
		if i.Key[j] != '/' || !strings.HasPrefix(i.Key, stepsPrefix) && !strings.HasPrefix(i.Key, packsPrefix) || !layoutKey(i.Key[:j]) {
			continue
		}
		k := i.Key[:j]
		for _, l := range f.listed {
			if l == k {
				return "", false
			}
		}
		return k, true
	}
	return "", false
}

// layoutKey reports whether key is one at which cairn writes an object.
func layoutKey(key string) bool {
	if s, ok := strings.CutPrefix(key, sessionsPrefix); ok {
		return ValidSession(s) == nil
	}
	return DescribeKey(key) != describeUnknown
}

// folderError is the error of finding a folder at key (see folders): the
// store's damage, said as a local store's directory in an object's place
// is (cas.NotObjectError).
func folderError(key string) error {
	ne := &cas.NotObjectError{Key: key, What: folderWhat}
	return fmt.Errorf("read %s: %w", key, &cas.RefusedError{Op: "get", Key: key, Why: ne.Error() + " (remove it to repair)", Err: ne})
}

// folderWhat is what stands where a folder does (cas.NotObjectError.What),
// as the S3 backends say it when they refuse a put there.
const folderWhat = "a directory"

// listObjects is the store's List of objects only: every entry that is
// no object is passed over. gc's listing (the objects it counts and may
// delete) is one: it never deletes a link or a directory in an object's
// place, nor counts it.
func (r *Repo) listObjects(ctx context.Context, prefix, after string, fn func(cas.Info) error) error {
	return r.listStore(ctx, prefix, after, func(i cas.Info) error {
		if i.NotObject != "" {
			return nil
		}
		return fn(i)
	})
}

// maxObject returns the bound on one object read.
func (r *Repo) maxObject() int64 {
	if n := r.maxObjectBytes.Load(); n > 0 {
		return n
	}
	return DefaultMaxObjectBytes
}

// read returns the bytes of the object at key, straight from the store:
// off..off+n (n < 0: to the end), refusing more than MaxObjectBytes.
// Every read of a step object or pack goes through here (I6).
func (r *Repo) read(ctx context.Context, key string, n int64) ([]byte, error) {
	max := r.maxObject()
	if n < 0 || n > max {
		n = max + 1
	}
	data, err := r.store.Get(ctx, key, 0, n)
	if err != nil {
		if errors.Is(err, cas.ErrNotFound) {
			// The store's words name the key; these name the object.
			return nil, fmt.Errorf("read %s: %w", DescribeKey(key), cas.ErrNotFound)
		}
		return nil, fmt.Errorf("read %s: %w", DescribeKey(key), err)
	}
	if int64(len(data)) > max {
		return nil, objectLimit(key, max)
	}
	return data, nil
}

// objectLimit is the error of the object at key being larger than max,
// the MaxObjectBytes of a read.
func objectLimit(key string, max int64) error {
	return fmt.Errorf("read %s: object larger than the limit: %w", DescribeKey(key),
		&tree.LimitError{Limit: "MaxObjectBytes", Max: max, What: "one object"})
}

// object returns the parsed whole object at key, from the cache or the store.
func (r *Repo) object(ctx context.Context, key string) (*pack.Object, error) {
	cache := r.cache
	if _, _, _, ok := ParseSpillKey(key); ok {
		cache = r.spills
	}
	if o := cache.get(key); o != nil {
		return o, nil
	}
	data, err := r.read(ctx, key, -1)
	if err != nil {
		return nil, err
	}
	obj, err := pack.Parse(data, DescribeKey(key))
	if err != nil {
		return nil, err
	}
	cache.put(key, obj)
	return obj, nil
}

// blobObject returns the object to read a blob of the object at key
// from: the cached one, else, for an object the cache found too large
// to keep, nil (read the blob alone: rangedBlob), else the object read
// whole (see object). A reader of a large pack through a small cache (an
// export's) read the whole pack again for each blob it read from it: 24
// GB for an export of a 2,000-step session of 28 MB.
func (r *Repo) blobObject(ctx context.Context, key string) (*pack.Object, error) {
	if _, _, _, ok := ParseSpillKey(key); !ok {
		if o := r.cache.get(key); o != nil {
			return o, nil
		}
		if r.cache.tooBig(key) {
			return nil, nil
		}
	}
	return r.object(ctx, key)
}

// rangedBlob reads the blob e of the object at key alone (or takes its
// stored bytes from the blob cache), and verifies it against its id
// (I1); its length is the entry's, bounded when the object's index was
// parsed (I6).
func (r *Repo) rangedBlob(ctx context.Context, key string, e pack.Entry) ([]byte, error) {
	what := fmt.Sprintf("blob %s in %s", e.ID.Short(), DescribeKey(key))
	if data := r.blobs.get(e.ID); data != nil {
		return pack.DecodeBlob(data, e.ID, int(e.RawLen), what)
	}
	data, err := r.store.Get(ctx, key, e.Offset, e.StoredLen)
	if err != nil {
		if errors.Is(err, cas.ErrNotFound) {
			return nil, fmt.Errorf("read %s: %w", DescribeKey(key), cas.ErrNotFound)
		}
		return nil, fmt.Errorf("read %s: %w", DescribeKey(key), err)
	}
	if int64(len(data)) != e.StoredLen {
		return nil, fmt.Errorf("%w: %s: %d bytes read, its index says %d", cas.ErrCorrupt, what, len(data), e.StoredLen)
	}
	raw, err := pack.DecodeBlob(data, e.ID, int(e.RawLen), what)
	if err == nil {
		r.blobs.put(e.ID, data)
	}
	return raw, err
}

// index returns the parsed object at key for an index load: the whole
// object (see object), but only the header and index of a spill pack,
// which an index load must not hold whole, many at a time.
func (r *Repo) index(ctx context.Context, key string) (*pack.Object, error) {
	if _, _, _, ok := ParseSpillKey(key); !ok {
		return r.object(ctx, key)
	}
	if o := r.spills.get(key); o != nil {
		return o, nil
	}
	for n := int64(spillHeaderPrefix); ; n *= 4 {
		data, err := r.read(ctx, key, n)
		if err != nil {
			return nil, err
		}
		obj, err := pack.ParseHeader(data, DescribeKey(key))
		if errors.Is(err, pack.ErrShort) && int64(len(data)) == n {
			continue // a longer index than a spill pack of ours has
		}
		if errors.Is(err, pack.ErrShort) {
			return nil, fmt.Errorf("%w: %s: truncated header", cas.ErrCorrupt, DescribeKey(key))
		}
		if err == nil && obj.Kind != pack.KindPack {
			err = fmt.Errorf("%w: %s: a large-file pack of kind %q", cas.ErrCorrupt, DescribeKey(key), obj.Kind)
		}
		return obj, err
	}
}

// remember caches an object this process just wrote, so reading it back
// costs no request.
func (r *Repo) remember(key string, data []byte) {
	if obj, err := pack.Parse(data, DescribeKey(key)); err == nil {
		r.cache.put(key, obj)
	}
}

// forget drops key from the object cache, and what reads learned of its
// blobs (View). GC calls it for every object it deletes or replaces, so
// that this process never reads them from memory again.
func (r *Repo) forget(key string) {
	r.cache.remove(key)
	r.reads.forget(key)
}

// SetMaxDepth sets the nesting of trees that gc, usage and verify walk
// at most (0: tree.DefaultLimits.MaxDepth). It may be called beside
// reads.
func (r *Repo) SetMaxDepth(n int) { r.maxDepth.Store(int64(n)) }

// SetMaxForkLevels sets the forks of forks HistoryStep passes through at
// most (0: MaxForkLevels). It may be called beside reads.
func (r *Repo) SetMaxForkLevels(n int) { r.maxForkLevels.Store(int64(n)) }

// depthBound returns the nesting of trees gc, usage and verify walk at
// most: the bound SetMaxDepth set, or tree.DefaultLimits.MaxDepth.
func (r *Repo) depthBound() int {
	if n := r.maxDepth.Load(); n > 0 {
		return int(n)
	}
	return tree.DefaultLimits.MaxDepth
}

// fetchAll reads the objects at keys with bounded parallelism.
func (r *Repo) fetchAll(ctx context.Context, keys []string, fn func(key string, obj *pack.Object)) error {
	const workers = 16
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	work := make(chan string)
	for w := 0; w < min(workers, len(keys)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for key := range work {
				obj, err := r.index(ctx, key)
				if errors.Is(err, cas.ErrNotFound) {
					// Every object fetched here is one a step's layout names.
					err = &lostError{key: key, by: namedByState, err: err}
				}
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				if err == nil {
					fn(key, obj)
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, k := range keys {
		select {
		case work <- k:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
