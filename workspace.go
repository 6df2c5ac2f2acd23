// Package cairn is a durable, content-addressed log of agent steps.
//
// A Workspace is one store (a local directory by default, or an S3 or
// MinIO prefix). Each Session in it is a chain of steps; committing a
// step stores the agent's whole state, but only what changed since the
// previous step costs bytes, and the step costs one object-store PUT.
// A crashed loop resumes from its session's head on any machine; any
// step can be forked into a new session without copying data.
//
//	ws, err := cairn.Open(ctx, "")            // the local default store
//	s, err := ws.Session("research-42")
//	st, err := s.Commit(ctx, cairn.JSON(state), cairn.CommitOptions{Record: rec})
//	head, err := s.Head(ctx)                  // later, anywhere
//	state, err := head.JSON(ctx)
package cairn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/metered"
	"github.com/cairnlog/cairn/cas/retry"
	"github.com/cairnlog/cairn/internal/storeurl"
	"github.com/cairnlog/cairn/internal/termtext"
	"github.com/cairnlog/cairn/manifest"
)

// Workspace is one cairn store, opened by Open or OpenStore. The zero
// Workspace, or a nil *Workspace, has no store: its calls fail with
// ErrInvalid, its setters and Close do nothing, its accessors return
// zero values. A copy of a Workspace value (w2 := *w) is refused: its
// calls and its Close fail with ErrInvalid, its setters do nothing. It
// is safe for concurrent use. Every method given a context fails with
// ErrInvalid, saying "nil context", if it is nil, as do the methods of
// Session and Step.
type Workspace struct {
	// self is the workspace Open or OpenStore made. A copy of the
	// struct (w2 := *w) has another address: it is refused (enter)
	// rather than sharing the original's sessions and caches under
	// locks of its own, and closing them under the original.
	self *Workspace

	url string
	// location is the backend's cas.Locator name, if it has one: what
	// local caches key the store by.
	location string
	meter    *metered.Store
	repo     *manifest.Repo
	// fanout is the compaction fanout of commits (0: no compaction),
	// which SetCompactionFanout may set beside commits.
	fanout atomic.Int64
	// limitsMu guards limits, which SetLimits may set beside reads.
	limitsMu sync.Mutex
	limits   Limits
	// heads is the directory of the head cache (nil or "": none;
	// UseHeadCache, which may be called beside commits: headsDir).
	heads atomic.Pointer[string]

	mu       sync.Mutex
	sessions map[string]*Session

	// now is the clock a Session measures how long it has held its head
	// by (time.Now; tests move it).
	now func() time.Time

	// life guards closed and calls: Close refuses every call that begins
	// after it (enter), and the last call in flight to end (exit)
	// releases what the workspace holds.
	life   sync.Mutex
	closed bool
	calls  int
	// backend is the store Open opened under the wrappers: Close closes
	// it if it is an io.Closer. nil for OpenStore, whose caller owns the
	// store.
	backend cas.Store
	// closeErr is what closing backend returned, once it was closed.
	closeErr error
}

// enter begins a call of the API named by what ("commit s"): it fails
// with ErrClosed once Close was called, and with ErrInvalid on a nil or
// zero Workspace. On success the caller defers exit.
func (w *Workspace) enter(what string) error {
	if w == nil {
		return invalid(fmt.Errorf("%s: no workspace (a nil *Workspace; a Workspace is made by Open or OpenStore)", what))
	}
	if w.copied() {
		return invalid(fmt.Errorf("%s: %s", what, copiedWorkspace))
	}
	if !w.opened() {
		return invalid(fmt.Errorf("%s: the workspace was not opened (a Workspace is made by Open or OpenStore)", what))
	}
	w.life.Lock()
	defer w.life.Unlock()
	if w.closed {
		return fmt.Errorf("%s: %w (Close was called)", what, ErrClosed)
	}
	w.calls++
	return nil
}

// enterCtx is enter for a call given a context: a nil ctx fails it
// with ErrInvalid, before anything else is looked at.
func (w *Workspace) enterCtx(ctx context.Context, what string) error {
	if ctx == nil {
		return nilContext(what)
	}
	return w.enter(what)
}

// opened reports whether Open or OpenStore made the workspace: a
// Workspace declared as a value, or a nil *Workspace, has no store, and
// every call on it fails (enter) or does nothing (the setters, Close);
// so does a copy of one (copied).
func (w *Workspace) opened() bool { return w != nil && w.repo != nil && w.self == w }

// copied reports whether w is a copy of the Workspace that Open or
// OpenStore made (w2 := *w), not that workspace.
func (w *Workspace) copied() bool { return w != nil && w.self != nil && w.self != w }

// copiedWorkspace says why a copy of a Workspace is refused.
const copiedWorkspace = "a copy of a Workspace value (use the *Workspace that Open or OpenStore returned: a copy would share its sessions and caches unguarded)"

// isClosed reports whether Close was called: the setters, which return
// no error, do nothing then.
func (w *Workspace) isClosed() bool {
	if !w.opened() {
		return true
	}
	w.life.Lock()
	defer w.life.Unlock()
	return w.closed
}

// exit ends a call begun by enter; the last to end after Close releases
// the workspace's resources.
func (w *Workspace) exit() {
	if w == nil {
		return
	}
	w.life.Lock()
	defer w.life.Unlock()
	w.calls--
	if w.closed && w.calls == 0 {
		w.release()
	}
}

// release drops what the workspace holds: its sessions with their heads,
// dedup indexes and documents, the object caches, and the store's own
// resources (a backend that is an io.Closer is closed). It runs once,
// with w.life held, when Close was called and no call is in flight, so
// nothing it drops is in use.
func (w *Workspace) release() {
	w.mu.Lock()
	sessions := w.sessions
	w.sessions = nil
	w.mu.Unlock()
	// A caller may keep its *Session: what it holds goes too.
	for _, s := range sessions {
		s.mu.Lock()
		s.head, s.index, s.doc, s.cacheBase = nil, nil, nil, nil
		s.mu.Unlock()
	}
	w.repo.DropCaches()
	w.repo.UseLocalObjects(nil)
	if c, ok := w.backend.(io.Closer); ok {
		w.closeErr = c.Close()
	}
}

// clock returns the workspace's time.
func (w *Workspace) clock() time.Time {
	if w.now != nil {
		return w.now()
	}
	return time.Now()
}

// Requests is a count of object-store requests by kind, and of the
// bytes they moved.
type Requests struct {
	Put          int64 `json:"put"`
	Get          int64 `json:"get"`
	List         int64 `json:"list"`
	Head         int64 `json:"head"`
	Delete       int64 `json:"delete"`
	BytesWritten int64 `json:"-"`
	BytesRead    int64 `json:"-"`
}

// Sub returns r - o, field by field.
func (r Requests) Sub(o Requests) Requests {
	return Requests(metered.Counts(r).Sub(metered.Counts(o)))
}

// Open opens the workspace at url. An empty url means $CAIRN_STORE, or
// else DefaultStore(). A plain path or file:// URL is a local directory;
// mem:// is an in-memory store (tests); s3:// and minio:// are object
// stores (see the README for their forms), opened by the backend
// registered for the scheme (see cas.Register; a program links the
// s3:// and minio:// backends by importing packages cas/s3 and cas/minio).
// A local directory need not exist (its first commit creates it), but a
// path that names a file, runs through one or loops through symbolic
// links is ErrInvalid.
func Open(ctx context.Context, url string) (_ *Workspace, err error) {
	if ctx == nil {
		return nil, nilContext("open " + url)
	}
	url = StoreURL(url)
	defer openedTo(url, &err)
	backend, remote, err := openStore(ctx, url)
	if err != nil {
		return nil, err
	}
	w := newWorkspace(url, backend, remote)
	w.backend = backend // opened here, so closed by Close
	return w, nil
}

// StoreURL returns the store Open opens for url: url itself, else
// $CAIRN_STORE, else DefaultStore().
func StoreURL(url string) string {
	if url == "" {
		url = os.Getenv("CAIRN_STORE")
	}
	if url == "" {
		url = DefaultStore()
	}
	return url
}

// OpenStore opens a workspace over an existing store, for embedding and
// tests. Requests are counted from here on. A nil store gives a
// workspace whose every call fails with ErrInvalid.
func OpenStore(store cas.Store) *Workspace {
	if store == nil {
		store = noStore{}
	}
	return newWorkspace("", store, false)
}

// noStore is the store of a workspace opened over none: every request
// fails, saying so, and a put is known to have left nothing.
type noStore struct{}

var errNoStore = fmt.Errorf("%w: the workspace has no store (OpenStore was given nil)", ErrInvalid)

func (noStore) Put(context.Context, string, []byte, cas.PutOptions) error {
	return cas.NotStored(errNoStore)
}
func (noStore) Get(context.Context, string, int64, int64) ([]byte, error) { return nil, errNoStore }
func (noStore) Stat(context.Context, string) (cas.Info, error)            { return cas.Info{}, errNoStore }
func (noStore) List(context.Context, string, string, func(cas.Info) error) error {
	return errNoStore
}
func (noStore) Delete(context.Context, string) error { return errNoStore }

// newWorkspace stacks the wrappers over backend: the request counter,
// and above it, for a remote store, the retry wrapper, so that every
// attempt is counted as the request it is.
func newWorkspace(url string, backend cas.Store, remote bool) *Workspace {
	meter := metered.New(backend)
	var store cas.Store = meter
	if remote {
		// A backend configured with its own number of attempts
		// (?attempts=N, $CAIRN_S3_ATTEMPTS) says so.
		p := retry.DefaultPolicy
		if a, ok := backend.(interface{ Attempts() int }); ok && a.Attempts() > 0 {
			p.Attempts = a.Attempts()
		}
		store = retry.New(meter, p)
	}
	location := ""
	if l, ok := backend.(cas.Locator); ok {
		location = l.Location()
	}
	w := &Workspace{
		url:      url,
		location: location,
		meter:    meter,
		repo:     manifest.NewRepo(store, 0),
		limits:   DefaultLimits,
		sessions: make(map[string]*Session),
	}
	w.self = w
	w.fanout.Store(DefaultCompactionFanout)
	return w
}

// DefaultStore returns the local directory used when no store is named:
// $XDG_DATA_HOME/cairn, or ~/.local/share/cairn. A relative
// $XDG_DATA_HOME is ignored, as the XDG base directory specification
// says: it would put the store in whatever directory a command runs in.
func DefaultStore() string {
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return d + "/cairn"
	}
	if h, err := os.UserHomeDir(); err == nil {
		return h + "/.local/share/cairn"
	}
	return ".cairn"
}

// DefaultCompactionFanout is the compaction fanout of a new workspace.
const DefaultCompactionFanout = 32

// SetCompactionFanout sets how many objects of one compaction level a
// step's layout may name before a commit merges them into one pack of
// the next level (default DefaultCompactionFanout; 0 or 1 turns
// compaction off). Larger fanouts write fewer, larger packs but leave
// more objects for a resume to read. Set it before committing (beside
// commits it is safe: each commit uses the fanout set when it writes). After
// Close it does nothing.
func (w *Workspace) SetCompactionFanout(n int) {
	if !w.isClosed() {
		w.fanout.Store(int64(n))
	}
}

// URL returns the store URL the workspace was opened with, a local
// directory (a path or a file:// URL, either of which may be relative)
// as its absolute path: the URL opens the same store from any working
// directory, as a command under cairn run that changes directory needs.
// "" for a workspace opened with OpenStore.
func (w *Workspace) URL() string {
	if w == nil || w.url == "" {
		return ""
	}
	if path, local := storeurl.Local(w.url); local {
		if a, err := filepath.Abs(path); err == nil {
			return a
		}
	}
	return w.url
}

// Close closes the workspace: every call that begins afterwards, on the
// workspace or on a Session or Step read from it, fails with an error
// matching ErrClosed (an ErrInvalid); the setters do nothing and the
// accessors (URL, Requests, Limits, Name) still answer. A call in flight
// when Close is called is not cut short: it ends as it would have (a
// commit's step is written or not, never in part), though a callback it
// makes (Log's fn) can no longer begin calls. What the workspace holds
// (sessions with their heads and dedup indexes, the object caches, a
// backend's resources) is released at once, or when the last call in
// flight ends. Close does not wait for those calls, so it may be called
// from inside one. It is safe to call concurrently and more than once;
// every call returns nil unless closing the store failed (or it is a
// copy of a Workspace value: ErrInvalid; a zero or nil Workspace: nil).
func (w *Workspace) Close() error {
	if w.copied() {
		return invalid(errors.New("close: " + copiedWorkspace))
	}
	if !w.opened() {
		return nil
	}
	w.life.Lock()
	defer w.life.Unlock()
	if !w.closed {
		w.closed = true
		if w.calls == 0 {
			w.release()
		}
	}
	return w.closeErr
}

// Requests returns the object-store requests made so far.
func (w *Workspace) Requests() Requests {
	if w == nil || w.meter == nil {
		return Requests{}
	}
	return Requests(w.meter.Counts())
}

// Session returns the session named name (which need not exist yet).
// Names are SessionNameRule. The same *Session is returned for
// the same name, so it keeps its head cached across commits.
func (w *Workspace) Session(name string) (_ *Session, err error) {
	if err := w.enter("session " + name); err != nil {
		return nil, err
	}
	defer w.exit()
	return w.session(name)
}

// session is Session for a call already in flight.
func (w *Workspace) session(name string) (_ *Session, err error) {
	defer w.classifyTo(&err)
	if err := ValidSession(name); err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	s, ok := w.sessions[name]
	if !ok {
		s = &Session{ws: w, name: name}
		s.self = s
		w.sessions[name] = s
	}
	return s, nil
}

// SessionNames returns the names of all sessions, in name order.
func (w *Workspace) SessionNames(ctx context.Context) (names []string, err error) {
	if err := w.enterCtx(ctx, "list sessions"); err != nil {
		return nil, err
	}
	defer w.exit()
	defer w.classifyTo(&err)
	if err := w.repo.Sessions(ctx, func(n string) error { names = append(names, n); return nil }); err != nil {
		return names, fmt.Errorf("list sessions: %w", err)
	}
	return names, nil
}

// Resolve returns the step named by ref: "S" (the head of session S) or
// "S@N" (step N of S).
func (w *Workspace) Resolve(ctx context.Context, ref string) (_ *Step, err error) {
	if err := w.enterCtx(ctx, "resolve "+ref); err != nil {
		return nil, err
	}
	defer w.exit()
	defer w.classifyTo(&err)
	name, n, err := ParseRef(ref)
	if err != nil {
		return nil, err
	}
	s, err := w.session(name)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return s.headStep(ctx)
	}
	return s.step(ctx, n)
}

// ParseRef reads a step reference as every part of cairn reads one (the
// CLI, the HTTP API, the MCP server): SESSION, the session's head (step
// 0 here), or SESSION@N, step N of its history, N in decimal digits, 1 or
// more. A reference that is neither is ErrInvalid, saying why: a session
// name that is not valid (as ValidSession says), or "bad step reference
// "s@0": steps are numbered from 1" (a number that is no whole number,
// or too large for a step).
func ParseRef(ref string) (session string, step uint64, err error) {
	name, num, hasNum := strings.Cut(ref, "@")
	if err := ValidSession(name); err != nil {
		return "", 0, err
	}
	if !hasNum {
		return name, 0, nil
	}
	n, err := strconv.ParseUint(num, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		err = fmt.Errorf("step number %s is too large (at most %d)", num, uint64(math.MaxUint64))
	case err != nil:
		err = errors.New("want SESSION@N with N a whole number, 1 or more")
	case n == 0:
		err = errors.New("steps are numbered from 1")
	}
	if err != nil {
		return "", 0, invalid(fmt.Errorf("bad step reference %s: %w", termtext.Quote(ref), err))
	}
	return name, n, nil
}

// SessionNameRule says what a session name may hold. It is the one text
// of the rule: this package's errors for a bad name (whichever call
// finds it bad), the CLI, the HTTP API and the MCP server all say it, so
// they cannot drift apart.
const SessionNameRule = manifest.SessionNameRule

// ValidSession reports whether name is a valid session name
// (SessionNameRule). The error, `invalid session name "N": want ` and
// the rule, matches ErrInvalid.
func ValidSession(name string) error {
	if manifest.ValidSession(name) != nil {
		return invalid(fmt.Errorf("invalid session name %s: want %s", termtext.Quote(name), SessionNameRule))
	}
	return nil
}

// IdempotencyKeyRule says in words which idempotency keys are valid
// (CommitOptions.IdempotencyKey), for messages.
const IdempotencyKeyRule = manifest.IdempotencyKeyRule

// ValidIdempotencyKey reports whether key may be a commit's idempotency
// key (IdempotencyKeyRule). The error, `invalid idempotency key "K"
// (N bytes): want ` and the rule, matches ErrInvalid.
func ValidIdempotencyKey(key string) error {
	if err := manifest.ValidIdempotencyKey(key); err != nil {
		return invalid(err)
	}
	return nil
}

// EachSession calls fn with the name of every session, in name order,
// without collecting them: for walks over stores with many sessions.
func (w *Workspace) EachSession(ctx context.Context, fn func(name string) error) (err error) {
	if err := w.enterCtx(ctx, "list sessions"); err != nil {
		return err
	}
	if fn == nil {
		return nilArg("list sessions", "function", "fn")
	}
	defer w.exit()
	defer w.classifyTo(&err)
	// fn's error is the caller's own, passed through as it is; the
	// listing's own failure (a cancelled ctx, the store) says so.
	var fnErr error
	err = w.repo.Sessions(ctx, func(name string) error { fnErr = fn(name); return fnErr })
	switch {
	case fnErr != nil:
		return fnErr
	case err != nil:
		return fmt.Errorf("list sessions: %w", err)
	}
	return nil
}

// ReadHead returns the newest step of session like Session.Head, but
// keeps nothing in the workspace afterwards, so a walk over every session
// holds only what its caller holds. A session with no steps is ErrNotFound;
// a removed one ErrRemoved.
func (w *Workspace) ReadHead(ctx context.Context, session string) (_ *Step, err error) {
	if err := w.enterCtx(ctx, "head of "+session); err != nil {
		return nil, err
	}
	defer w.exit()
	return w.readHead(ctx, session)
}

// readHead is ReadHead for a call already in flight.
func (w *Workspace) readHead(ctx context.Context, session string) (_ *Step, err error) {
	defer w.classifyTo(&err)
	if err := ValidSession(session); err != nil {
		return nil, err
	}
	st, _, base, err := w.repo.ReadHead(ctx, session)
	if err != nil {
		return nil, fmt.Errorf("head of %s: %w", session, err)
	}
	if st == nil {
		return nil, noStepsErr(session, 0)
	}
	if isRemoved(st, base) {
		return nil, removedErr(session, 0)
	}
	return newStep(w, st), nil
}

// isRemoved reports whether st, the newest step listed for a session
// whose base is base, says the session was removed: it is below the base,
// or it is the tombstone that fences the session.
func isRemoved(st *manifest.Step, base uint64) bool {
	return st.Manifest.Number < base || manifest.IsTombstone(st.Manifest)
}

// removedNow says, by the rule gc applies (manifest.Repo.ReadHead), whether
// session, whose base was read above a step, was removed: its newest step
// and base have a form a removal writes. If the base marker is damaged
// (above the head in any other form) it returns that error, which wraps
// cas.ErrCorrupt; a head it cannot read otherwise says nothing here
// (false, no error), and the caller answers as before. head is the
// session's newest step. It costs a head lookup: callers pay it only on
// the paths where a base is above a step they were asked for.
func (w *Workspace) removedNow(ctx context.Context, session string) (removed bool, head uint64, err error) {
	_, head, base, err := w.repo.ReadHead(ctx, session)
	var bad *manifest.BaseError
	if errors.As(err, &bad) {
		return false, head, err
	}
	return err == nil && head > 0 && head < base, head, nil
}

// belowBase is the error for step n of session, below the session's
// base: the session was removed if the slot under the base holds the
// tombstone that removing it put there, else step n was pruned. It costs
// one GET on this error path only, and for a removed session a head
// lookup, to say whether the name was committed to again.
func (w *Workspace) belowBase(ctx context.Context, session string, n, base uint64) error {
	if w.removedBelow(ctx, session, base) {
		// The name may have been committed to since: say where its new
		// history starts, or the user reads a live session as gone.
		if head, err := w.repo.FindHead(ctx, session); err == nil && head >= base {
			return &NotFoundError{Session: session, Step: n, Why: NotFoundRemoved, Start: base}
		}
		return removedErr(session, n)
	}
	return &NotFoundError{Session: session, Step: n, Why: NotFoundPruned, Start: base}
}

// underBase is the error for step n of session, below the session's
// base, as Session.Step says it: if the session is removed now (gc's
// rule: removedNow), removed, and a session forked from it above step
// n holds the step still (which forks there are is not known without a
// listing of every session, so the words name none); else belowBase's
// answer; or the error of a damaged base marker.
func (w *Workspace) underBase(ctx context.Context, session string, n, base uint64) error {
	removed, _, err := w.removedNow(ctx, session)
	switch {
	case err != nil:
		return fmt.Errorf("step %s@%d: %w", session, n, err)
	case removed:
		return &NotFoundError{Session: session, Step: n, Why: NotFoundRemoved, InForks: true}
	}
	return w.belowBase(ctx, session, n, base)
}

// removedBelow reports whether the history of session ends at base
// because the session was removed there (the slot under the base holds
// Remove's tombstone), not because it was pruned. It costs one GET.
func (w *Workspace) removedBelow(ctx context.Context, session string, base uint64) bool {
	if base <= 1 {
		return false
	}
	st, err := w.repo.ReadStep(ctx, session, base-1)
	return err == nil && manifest.IsTombstone(st.Manifest)
}

// ForkOrigin returns the step session was forked from (the Origin of the
// oldest step of its history), or nil if it was not forked; a session
// with no steps stored (a mistyped name) is ErrNotFound. The history
// starts at the session's base (see Prune and Remove): a fork whose first
// step was pruned, or a removed fork whose name was committed to again,
// continues no fork, whether or not gc has swept the older steps. It
// costs one LIST and two GETs.
func (w *Workspace) ForkOrigin(ctx context.Context, session string) (_ *StepRef, err error) {
	if err := w.enterCtx(ctx, "fork origin of "+session); err != nil {
		return nil, err
	}
	defer w.exit()
	defer w.classifyTo(&err)
	if err := ValidSession(session); err != nil {
		return nil, err
	}
	st, err := w.firstStep(ctx, session)
	if err != nil || st == nil {
		// A typo must not read as "not forked": firstStep says it has
		// no steps.
		return nil, err
	}
	return refOf(st.Origin), nil
}

// FirstStep returns the oldest step of session's history (the step at
// its base, once pruned), as ForkOrigin finds it: an error matching
// ErrNotFound if the session has no step, nil if its steps are all
// pruned or removed.
// Its Parent, if the older history was pruned, names a step below the
// base, which ReadStep reads until gc sweeps it. It costs one LIST and
// two GETs.
func (w *Workspace) FirstStep(ctx context.Context, session string) (_ *Step, err error) {
	if err := w.enterCtx(ctx, "first step of "+session); err != nil {
		return nil, err
	}
	defer w.exit()
	defer w.classifyTo(&err)
	if err := ValidSession(session); err != nil {
		return nil, err
	}
	st, err := w.firstStep(ctx, session)
	if err != nil || st == nil {
		return nil, err
	}
	return newStep(w, st), nil
}

// firstStep returns the oldest step of session's history, or nil if it
// has none (a removed session): see ForkOrigin. A session with no steps
// stored at all is its NotFoundError.
func (w *Workspace) firstStep(ctx context.Context, session string) (*manifest.Step, error) {
	n, err := w.repo.FirstStep(ctx, session)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, noStepsErr(session, 0)
	}
	base, err := w.repo.ReadBase(ctx, session)
	if err != nil {
		return nil, fmt.Errorf("fork origin of %s: %w", session, err)
	}
	// Steps below the base are pruned or removed, until gc sweeps them:
	// the history starts at the base, which a removed session that was
	// not committed to again does not hold.
	below := n < base
	if below {
		n = base
	}
	st, err := w.repo.ReadStep(ctx, session, n)
	if below && errors.Is(err, cas.ErrNotFound) {
		// Removed, unless the base marker is damaged: then the
		// history's start is not known, and that is the answer.
		if _, _, err := w.removedNow(ctx, session); err != nil {
			return nil, fmt.Errorf("fork origin of %s: %w", session, err)
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fork origin of %s: %w", session, err)
	}
	return st, nil
}

// ReadStep returns step n of session without registering the session in
// the workspace. It reads the step's object as stored, nothing more: a
// step that Prune or Remove dropped from the session's history is still
// returned until gc deletes it (Session.Step and Resolve refuse it with
// ErrNotFound), and a fork's step below its first step is not found
// there (Session.Step reads it in the history it was forked from).
// A missing step is a *NotFoundError, which says why as Session.Step
// does (it has no steps, the step is above the head, pruned, removed,
// or lost) at the cost, on that path only, of the reads that tell; a
// fork's step below its first step is one that says no reason. If the
// session's steps cannot be listed (or its base marker read), whether
// the step was ever written is not known: the error is that failure's,
// not ErrNotFound.
func (w *Workspace) ReadStep(ctx context.Context, session string, n uint64) (_ *Step, err error) {
	if err := w.enterCtx(ctx, fmt.Sprintf("step %s@%d", session, n)); err != nil {
		return nil, err
	}
	defer w.exit()
	defer w.classifyTo(&err)
	if err := ValidSession(session); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, invalid(fmt.Errorf("step %s@0: steps are numbered from 1", session))
	}
	st, err := w.repo.ReadStep(ctx, session, n)
	if errors.Is(err, cas.ErrNotFound) {
		var forkFirst *manifest.Step
		st, forkFirst, err = w.missingStep(ctx, session, n)
		var nf *NotFoundError
		switch {
		case forkFirst != nil:
			// Its history holds step n, not its own objects, which
			// are all this reads.
			return nil, &NotFoundError{Session: session, Step: n}
		case errors.As(err, &nf):
			return nil, err
		case err != nil:
			// Why is not known: the session's steps cannot be listed,
			// or its base marker read. That error says what is wrong
			// (an outage, damage), as Session.Step says it; "not
			// found" would hide it.
			return nil, err
		}
	}
	if err != nil {
		return nil, err
	}
	return newStep(w, st), nil
}

// SetCacheLimit bounds the workspace's cache of recently read step
// objects to max bytes (0: the default 256 MiB), and with it what reads
// keep of those objects' blob indexes: a sixteenth of max, or max itself
// up to 1 MiB if that is more (see docs/limits.md). Call it right after
// Open, before the workspace is used: called beside reads and commits it
// is safe, and empties the cache they share, which they fill again.
// After Close it does nothing.
func (w *Workspace) SetCacheLimit(max int64) {
	if !w.isClosed() {
		w.repo.SetCacheLimit(max)
	}
}
