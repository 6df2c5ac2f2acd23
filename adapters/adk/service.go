// Package adk is a session.Service for Google's Agent Development Kit for Go
// that keeps sessions in cairn.
//
// Each ADK session is a cairn session: its whole stored form — ids, times,
// session-scoped state and every event — is one JSON document, and every
// appended event commits the next step of it. cairn stores JSON structurally
// (objects as trees, the events array as a content-defined list), so a step
// stores only the new event, the changed state keys and the paths above
// them: a long session costs its new events, not its length, and every
// intermediate state stays in the log to inspect, diff or fork.
//
// App-scoped ("app:") and user-scoped ("user:") state live in their own cairn
// sessions, one per app and one per app and user, and are merged into every
// session they apply to, as ADK requires; "temp:" keys are never stored.
//
//	ws, _ := cairn.Open(ctx, "s3://bucket/agents") // with import _ "github.com/cairnlog/cairn/cas/s3"
//	svc := adk.New(ws)
//	r, _ := runner.New(runner.Config{AppName: "app", Agent: a, SessionService: svc})
//
// Appending an event is one step of the session (one PUT on an object store)
// plus one step of the app or user state when the event changes it. The two
// are not one transaction: the event is committed first, so a crash between
// the two can lose an app:/user: delta but never an event.
package adk

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/cairnlog/cairn"
	"google.golang.org/adk/platform"
	"google.golang.org/adk/session"
)

// DefaultPrefix starts the name of every cairn session the service uses
// unless Options.Prefix says otherwise.
const DefaultPrefix = "adk-"

// maxRetries bounds how often an update is re-applied after losing a race
// with another writer of the same cairn session.
const maxRetries = 8

// Options configure a Service.
type Options struct {
	// Prefix starts every cairn session name the service uses (default
	// DefaultPrefix), so that ADK sessions can share a workspace with
	// others. It must be 1-32 of [A-Za-z0-9._-], not starting with '.'.
	Prefix string
}

// Service is an ADK session.Service on a cairn workspace. It is safe for
// concurrent use, and several processes may share one workspace: writes to
// the same session are fenced by cairn's conditional step slots. An event
// appended with a session that another writer has appended to since it was
// read is refused (ErrStaleSession); app and user state deltas are
// re-applied on top of the winner.
type Service struct {
	ws     *cairn.Workspace
	prefix string

	mu      sync.Mutex
	entries map[string]*entry // cairn session name -> last committed document
}

var _ session.Service = (*Service)(nil)

// New returns a Service over ws with default options.
func New(ws *cairn.Workspace) *Service {
	s, _ := NewWithOptions(ws, Options{})
	return s
}

// NewWithOptions returns a Service over ws, or an error if opts are invalid.
func NewWithOptions(ws *cairn.Workspace, opts Options) (*Service, error) {
	p := opts.Prefix
	if p == "" {
		p = DefaultPrefix
	}
	if len(p) > 32 || p[0] == '.' || strings.IndexFunc(p, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
	}) >= 0 {
		return nil, fmt.Errorf("adk session service: invalid prefix %q (want 1-32 of [A-Za-z0-9._-], not starting with '.')", p)
	}
	return &Service{ws: ws, prefix: p, entries: make(map[string]*entry)}, nil
}

// Session names. ADK ids are arbitrary strings, so they are hashed; the ids
// themselves are stored in the document and checked on every read.

func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (s *Service) appPart(app string) string   { return digest("app", app)[:16] }
func (s *Service) userPart(user string) string { return digest("user", user)[:16] }

// SessionName returns the cairn session that holds ADK session id of user
// in app: the prefix, "s-", and hashes of the app, the user and all three
// ids. `cairn log` and `cairn fork` find the session under this name.
func (s *Service) SessionName(app, user, id string) string {
	return s.prefix + "s-" + s.appPart(app) + "-" + s.userPart(user) + "-" + digest("session", app, user, id)[:32]
}

// UserStateName returns the cairn session holding the user: state of user in app.
func (s *Service) UserStateName(app, user string) string {
	return s.prefix + "u-" + s.appPart(app) + "-" + s.userPart(user)
}

// AppStateName returns the cairn session holding the app: state of app.
func (s *Service) AppStateName(app string) string {
	return s.prefix + "a-" + s.appPart(app)
}

// Stored documents.

const docVersion = 1

// sessionDoc is the JSON state of an ADK session's cairn session.
type sessionDoc struct {
	Version int                        `json:"adk_session"`
	App     string                     `json:"app"`
	User    string                     `json:"user"`
	ID      string                     `json:"id"`
	Created time.Time                  `json:"created"`
	Updated time.Time                  `json:"updated"`
	Deleted bool                       `json:"deleted,omitempty"`
	State   map[string]json.RawMessage `json:"state"`
	Events  []json.RawMessage          `json:"events"`

	// seen is how many events the document held when List dropped them.
	seen int
}

// scopedDoc is the JSON state of an app's or a user's state session.
type scopedDoc struct {
	Version int                        `json:"adk_state"`
	App     string                     `json:"app"`
	User    string                     `json:"user,omitempty"`
	State   map[string]json.RawMessage `json:"state"`
}

// decodeSessionDoc parses a stored session document and checks its form.
func decodeSessionDoc(b []byte) (*sessionDoc, error) {
	var d sessionDoc
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("not an ADK session document: %w", err)
	}
	if d.Version != docVersion {
		return nil, fmt.Errorf("ADK session document version %d, want %d", d.Version, docVersion)
	}
	if d.App == "" || d.User == "" || d.ID == "" {
		return nil, errors.New("ADK session document without app, user or id")
	}
	return &d, nil
}

// decodeScopedDoc parses a stored app or user state document.
func decodeScopedDoc(b []byte) (*scopedDoc, error) {
	var d scopedDoc
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("not an ADK state document: %w", err)
	}
	if d.Version != docVersion {
		return nil, fmt.Errorf("ADK state document version %d, want %d", d.Version, docVersion)
	}
	return &d, nil
}

// encode returns the document as compact JSON. The events are already
// compact JSON (json.Marshal wrote them or decodeSessionDoc checked them),
// so they are copied, not re-validated: a long session's document is
// rewritten on every append.
func (d *sessionDoc) encode() ([]byte, error) {
	head := *d
	head.Events = nil
	b, err := json.Marshal(&head)
	if err != nil {
		return nil, err
	}
	const tail = `"events":null}`
	if !bytes.HasSuffix(b, []byte(tail)) {
		return nil, fmt.Errorf("encode session document: unexpected form %.40q", b)
	}
	n := len(b) + 2
	for _, ev := range d.Events {
		n += len(ev) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, b[:len(b)-len(tail)]...)
	out = append(out, `"events":[`...)
	for i, ev := range d.Events {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, ev...)
	}
	return append(out, "]}"...), nil
}

func (d *sessionDoc) decodeState() (map[string]any, error) { return decodeValues(d.State) }

func decodeValues(m map[string]json.RawMessage) (map[string]any, error) {
	out := make(map[string]any, len(m))
	for k, raw := range m {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("state key %q: %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}

func decodeEvent(raw json.RawMessage) (*session.Event, error) {
	ev := new(session.Event)
	if err := json.Unmarshal(raw, ev); err != nil {
		return nil, fmt.Errorf("event: %w", err)
	}
	return ev, nil
}

// checkKeys refuses a state delta with a stored key (not temp:) that is
// not UTF-8: JSON turns each bad byte into U+FFFD, so two such keys would
// be stored as one, under a name neither had.
func checkKeys(delta map[string]any) error {
	for k := range delta {
		if !utf8.ValidString(k) && !strings.HasPrefix(k, session.KeyPrefixTemp) {
			return fmt.Errorf("state key %q is not valid UTF-8, which a JSON document cannot hold", k)
		}
	}
	return nil
}

// setValues stores each value of delta, JSON encoded, into m.
func setValues(m map[string]json.RawMessage, delta map[string]any) error {
	for k, v := range delta {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("state key %q: %w", k, err)
		}
		m[k] = b
	}
	return nil
}

// Read-modify-write of one cairn session's document, fenced by the step
// slot and retried on conflict.

// entry caches the last document committed to (or read from) one cairn
// session, so that a loop appending events makes one PUT and no GET.
type entry struct {
	mu     sync.Mutex
	loaded bool
	step   uint64 // head step number; 0: the session has no steps
	doc    []byte // head document (nil if step is 0)
	// parsed is doc decoded, if an update left it there (*sessionDoc);
	// owned by the holder of mu.
	parsed any
}

// maxEntries bounds the documents the service keeps in memory.
const maxEntries = 256

func (s *Service) entry(name string) *entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[name]
	if e == nil {
		if len(s.entries) >= maxEntries {
			// Forget an idle one. Should a caller still hold it, two
			// entries may briefly exist for one session: harmless, as
			// every commit is fenced by the step slot.
			for n, old := range s.entries {
				if old.mu.TryLock() {
					old.mu.Unlock()
					delete(s.entries, n)
					break
				}
			}
		}
		e = &entry{}
		s.entries[name] = e
	}
	return e
}

// load reads the head of the cairn session into e. Callers hold e.mu.
func (s *Service) load(ctx context.Context, name string, e *entry) error {
	sess, err := s.ws.Session(name)
	if err != nil {
		return err
	}
	head, err := sess.Head(ctx)
	if errors.Is(err, cairn.ErrNotFound) {
		e.loaded, e.step, e.doc, e.parsed = true, 0, nil, nil
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", name, hinted(err))
	}
	doc, err := head.JSON(ctx)
	if err != nil {
		return fmt.Errorf("read %s: %w", head, hinted(err))
	}
	e.loaded, e.step, e.doc, e.parsed = true, head.Number, doc, nil
	return nil
}

// read returns the current head document of name (nil if none), always
// reading the store so that other processes' writes are seen.
func (s *Service) read(ctx context.Context, name string) ([]byte, error) {
	var e entry
	if err := s.load(ctx, name, &e); err != nil {
		return nil, err
	}
	return e.doc, nil
}

// errNoCommit from a mutate function means: leave the session as it is.
var errNoCommit = errors.New("no commit")

// update applies mutate to name's head document (nil if none) and commits
// what it returns as the next step. If another writer got the step first,
// the head is re-read and mutate applied again on top of it. A commit is
// fenced by the step slot, but a verdict without one (errNoCommit, or an
// error such as "already exists") is not: one reached on the document this
// process last wrote is reached again on the store's head, which another
// process may have moved since.
//
// mutate gets the head document and, if known, its decoded form (which it
// may change), and returns the next document and optionally its decoded
// form, kept for the next update if the commit succeeds.
func (s *Service) update(ctx context.Context, name string, opts cairn.CommitOptions, mutate func(doc []byte, parsed any) ([]byte, any, error)) error {
	sess, err := s.ws.Session(name)
	if err != nil {
		return err
	}
	e := s.entry(name)
	e.mu.Lock()
	defer e.mu.Unlock()
	for attempt := 0; ; attempt++ {
		fresh := !e.loaded
		if fresh {
			if err := s.load(ctx, name, e); err != nil {
				return err
			}
		}
		parsed := e.parsed
		e.parsed = nil
		next, nextParsed, err := mutate(e.doc, parsed)
		if err != nil && !fresh {
			e.loaded = false
			continue
		}
		if errors.Is(err, errNoCommit) {
			e.parsed = parsed
			return nil
		}
		if err != nil {
			e.loaded, e.parsed = false, nil
			return err
		}
		opts.Expect = cairn.ExpectHead(e.step)
		st, err := sess.Commit(ctx, cairn.JSON(next), opts)
		if err == nil {
			e.step, e.doc, e.parsed = st.Number, next, nextParsed
			return nil
		}
		e.loaded, e.parsed = false, nil
		if !errors.Is(err, cairn.ErrConflict) || attempt == maxRetries {
			return fmt.Errorf("commit %s: %w", name, hinted(err))
		}
	}
}

// updateScoped applies delta to the app (user == "") or user state of app
// and returns the resulting state.
func (s *Service) updateScoped(ctx context.Context, app, user string, delta map[string]any) (map[string]json.RawMessage, error) {
	name := s.AppStateName(app)
	if user != "" {
		name = s.UserStateName(app, user)
	}
	var result map[string]json.RawMessage
	err := s.update(ctx, name, cairn.CommitOptions{}, func(b []byte, _ any) ([]byte, any, error) {
		d := &scopedDoc{Version: docVersion, App: app, User: user}
		if b != nil {
			var err error
			if d, err = decodeScopedDoc(b); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", name, err)
			}
			if d.App != app || d.User != user {
				return nil, nil, fmt.Errorf("%s holds the state of app %q user %q, not app %q user %q", name, d.App, d.User, app, user)
			}
		}
		if d.State == nil {
			d.State = make(map[string]json.RawMessage)
		}
		if err := setValues(d.State, delta); err != nil {
			return nil, nil, err
		}
		result = d.State
		next, err := json.Marshal(d)
		return next, nil, err
	})
	return result, err
}

// scopedState reads the app (user == "") or user state of app.
func (s *Service) scopedState(ctx context.Context, app, user string) (map[string]any, error) {
	name := s.AppStateName(app)
	if user != "" {
		name = s.UserStateName(app, user)
	}
	b, err := s.read(ctx, name)
	if err != nil || b == nil {
		return map[string]any{}, err
	}
	d, err := decodeScopedDoc(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if d.App != app || d.User != user {
		return nil, fmt.Errorf("%s holds the state of app %q user %q, not app %q user %q", name, d.App, d.User, app, user)
	}
	return decodeValues(d.State)
}

// splitDelta splits a state delta into its app, user and session parts (the
// first two without their prefixes), dropping temp: keys.
func splitDelta(delta map[string]any) (app, user, sess map[string]any) {
	app, user, sess = map[string]any{}, map[string]any{}, map[string]any{}
	for k, v := range delta {
		if c, ok := strings.CutPrefix(k, session.KeyPrefixApp); ok {
			app[c] = v
		} else if c, ok := strings.CutPrefix(k, session.KeyPrefixUser); ok {
			user[c] = v
		} else if !strings.HasPrefix(k, session.KeyPrefixTemp) {
			sess[k] = v
		}
	}
	return app, user, sess
}

// merge returns the state a session sees: its own keys, and the app and
// user state under their prefixes.
func merge(app, user, sess map[string]any) map[string]any {
	m := make(map[string]any, len(app)+len(user)+len(sess))
	maps.Copy(m, sess)
	for k, v := range app {
		m[session.KeyPrefixApp+k] = v
	}
	for k, v := range user {
		m[session.KeyPrefixUser+k] = v
	}
	return m
}

// ErrStaleSession is the error of AppendEvent for a session that another
// writer (another runner, process or machine) appended to since it was
// read: its event would be stored after events it never saw, and its state
// changes made on state it never saw. Nothing is stored; Get the session
// again to see what changed. ADK's database service refuses such an
// append too.
var ErrStaleSession = errors.New("stale session")

// staleSession is ErrStaleSession for a session whose stored form holds
// held events where the caller's copy has seen seen.
func staleSession(app, user, id string, held, seen int) error {
	what := "was changed by another writer"
	if held > seen {
		what = fmt.Sprintf("has %d event(s) another writer appended", held-seen)
	}
	return fmt.Errorf("%w: session %q of app %q user %q %s since it was read; get it again", ErrStaleSession, id, app, user, what)
}

// notFound is the error for a session that does not exist, without the
// service's name (the caller adds it, once).
func notFound(app, user, id string) error {
	return fmt.Errorf("session %q of app %q user %q not found", id, app, user)
}

// Create creates a session: its first step (or, for an id that was
// deleted, its next step). It fails if the session exists.
func (s *Service) Create(ctx context.Context, req *session.CreateRequest) (*session.CreateResponse, error) {
	if req.AppName == "" || req.UserID == "" {
		return nil, fmt.Errorf("adk session service: app_name and user_id are required, got app_name: %q, user_id: %q", req.AppName, req.UserID)
	}
	id := req.SessionID
	if id == "" {
		id = platform.NewUUID(ctx)
	}
	for _, v := range [][2]string{{"app_name", req.AppName}, {"user_id", req.UserID}, {"session_id", id}} {
		if !utf8.ValidString(v[1]) {
			return nil, fmt.Errorf("adk session service: create session: %s %q is not valid UTF-8, which the stored session cannot record", v[0], v[1])
		}
	}
	if err := checkKeys(req.State); err != nil {
		return nil, fmt.Errorf("adk session service: create session %q: %w", id, err)
	}
	appDelta, userDelta, sessState := splitDelta(req.State)
	// The session is committed before the app and user state: a value
	// those cannot store must fail Create before the session exists, or a
	// retry would find it "already exists".
	for _, delta := range []map[string]any{appDelta, userDelta} {
		if err := setValues(map[string]json.RawMessage{}, delta); err != nil {
			return nil, fmt.Errorf("adk session service: create session %q: %w", id, err)
		}
	}
	now := platform.Now(ctx)
	name := s.SessionName(req.AppName, req.UserID, id)
	err := s.update(ctx, name, cairn.CommitOptions{Record: record("create", "")}, func(b []byte, _ any) ([]byte, any, error) {
		if b != nil {
			d, err := decodeSessionDoc(b)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", name, err)
			}
			if !d.Deleted {
				return nil, nil, fmt.Errorf("session %q of app %q user %q already exists", id, req.AppName, req.UserID)
			}
		}
		d := &sessionDoc{Version: docVersion, App: req.AppName, User: req.UserID, ID: id,
			Created: now, Updated: now, State: map[string]json.RawMessage{}, Events: []json.RawMessage{}}
		if err := setValues(d.State, sessState); err != nil {
			return nil, nil, err
		}
		next, err := d.encode()
		return next, d, err
	})
	if err != nil {
		return nil, fmt.Errorf("adk session service: create: %w", err)
	}
	appState, userState, err := s.applyScoped(ctx, req.AppName, req.UserID, appDelta, userDelta)
	if err != nil {
		// A failed Create leaves no session (its retry would find it
		// "already exists"): the store may refuse what encodes fine, such
		// as a value nested deeper than cairn stores JSON.
		if derr := s.Delete(ctx, &session.DeleteRequest{AppName: req.AppName, UserID: req.UserID, SessionID: id}); derr != nil {
			err = errors.Join(err, derr)
		}
		return nil, fmt.Errorf("adk session service: create session %q: %w", id, err)
	}
	return &session.CreateResponse{Session: &adkSession{
		appName: req.AppName, userID: req.UserID, id: id,
		state:   merge(appState, userState, sessState),
		events:  []*session.Event{},
		updated: now,
	}}, nil
}

// applyScoped applies non-empty app and user deltas and returns both states.
func (s *Service) applyScoped(ctx context.Context, app, user string, appDelta, userDelta map[string]any) (appState, userState map[string]any, err error) {
	if len(appDelta) > 0 {
		raw, err := s.updateScoped(ctx, app, "", appDelta)
		if err != nil {
			return nil, nil, err
		}
		if appState, err = decodeValues(raw); err != nil {
			return nil, nil, err
		}
	} else if appState, err = s.scopedState(ctx, app, ""); err != nil {
		return nil, nil, err
	}
	if len(userDelta) > 0 {
		raw, err := s.updateScoped(ctx, app, user, userDelta)
		if err != nil {
			return nil, nil, err
		}
		if userState, err = decodeValues(raw); err != nil {
			return nil, nil, err
		}
	} else if userState, err = s.scopedState(ctx, app, user); err != nil {
		return nil, nil, err
	}
	return appState, userState, nil
}

// readSession reads the stored document of a session; nil if it does not
// exist or was deleted.
func (s *Service) readSession(ctx context.Context, app, user, id string) (*sessionDoc, error) {
	name := s.SessionName(app, user, id)
	b, err := s.read(ctx, name)
	if err != nil || b == nil {
		return nil, err
	}
	d, err := decodeSessionDoc(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if d.App != app || d.User != user || d.ID != id {
		return nil, fmt.Errorf("%s holds session %q of app %q user %q, not %q of %q %q", name, d.ID, d.App, d.User, id, app, user)
	}
	if d.Deleted {
		return nil, nil
	}
	return d, nil
}

// Get returns a session with its events (the NumRecentEvents newest, and
// only those at or after After, if set) and its merged state, read from
// the store.
func (s *Service) Get(ctx context.Context, req *session.GetRequest) (*session.GetResponse, error) {
	app, user, id := req.AppName, req.UserID, req.SessionID
	if app == "" || user == "" || id == "" {
		return nil, fmt.Errorf("adk session service: app_name, user_id, session_id are required, got app_name: %q, user_id: %q, session_id: %q", app, user, id)
	}
	d, err := s.readSession(ctx, app, user, id)
	if err != nil {
		return nil, fmt.Errorf("adk session service: get session %q of app %q user %q: %w", id, app, user, err)
	}
	if d == nil {
		return nil, fmt.Errorf("adk session service: %w", notFound(app, user, id))
	}
	raw := d.Events
	if req.NumRecentEvents > 0 && len(raw) > req.NumRecentEvents {
		raw = raw[len(raw)-req.NumRecentEvents:]
	}
	evs := make([]*session.Event, 0, len(raw))
	for i, r := range raw {
		ev, err := decodeEvent(r)
		if err != nil {
			return nil, fmt.Errorf("adk session service: get session %q: event %d: %w", id, len(d.Events)-len(raw)+i, err)
		}
		evs = append(evs, ev)
	}
	if !req.After.IsZero() {
		// Every event at or after req.After, in append order. Their
		// timestamps need not be in that order: writers on other machines
		// re-apply their events on top of each other's.
		evs = slices.DeleteFunc(evs, func(ev *session.Event) bool { return ev.Timestamp.Before(req.After) })
	}
	sessState, err := d.decodeState()
	if err != nil {
		return nil, fmt.Errorf("adk session service: get session %q: %w", id, err)
	}
	appState, userState, err := s.applyScoped(ctx, app, user, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("adk session service: get session %q: %w", id, err)
	}
	return &session.GetResponse{Session: &adkSession{
		appName: app, userID: user, id: id, seen: len(d.Events),
		state:   merge(appState, userState, sessState),
		events:  evs,
		updated: d.Updated,
	}}, nil
}

// listReaders bounds how many sessions List reads at once.
const listReaders = 8

// List returns the sessions of app (of one user if UserID is set), with
// their merged state and without events. It lists the workspace's session
// names once and reads the head of each matching session, listReaders at a
// time.
func (s *Service) List(ctx context.Context, req *session.ListRequest) (*session.ListResponse, error) {
	if req.AppName == "" {
		return nil, fmt.Errorf("adk session service: app_name is required, got app_name: %q", req.AppName)
	}
	names, err := s.ws.SessionNames(ctx)
	if err != nil {
		return nil, fmt.Errorf("adk session service: list: %w", err)
	}
	want := s.prefix + "s-" + s.appPart(req.AppName) + "-"
	if req.UserID != "" {
		want += s.userPart(req.UserID) + "-"
	}
	appState, err := s.scopedState(ctx, req.AppName, "")
	if err != nil {
		return nil, fmt.Errorf("adk session service: list: %w", err)
	}
	var match []string
	for _, name := range names {
		if strings.HasPrefix(name, want) {
			match = append(match, name)
		}
	}
	docs, err := s.listDocs(ctx, match, req)
	if err != nil {
		return nil, fmt.Errorf("adk session service: list: %w", err)
	}
	userStates := map[string]map[string]any{}
	out := make([]session.Session, 0)
	for i, d := range docs {
		if d == nil {
			continue
		}
		name := match[i]
		us, ok := userStates[d.User]
		if !ok {
			if us, err = s.scopedState(ctx, d.App, d.User); err != nil {
				return nil, fmt.Errorf("adk session service: list: %w", err)
			}
			userStates[d.User] = us
		}
		st, err := d.decodeState()
		if err != nil {
			return nil, fmt.Errorf("adk session service: list: %s: %w", name, err)
		}
		out = append(out, &adkSession{appName: d.App, userID: d.User, id: d.ID, seen: d.seen,
			state: merge(appState, us, st), events: []*session.Event{}, updated: d.Updated})
	}
	return &session.ListResponse{Sessions: out}, nil
}

// listDocs reads the sessions named, listReaders at a time, and returns
// the document of each (nil for one that is deleted, absent or not a
// session of req's app and user), its events dropped as List returns none.
func (s *Service) listDocs(ctx context.Context, names []string, req *session.ListRequest) ([]*sessionDoc, error) {
	docs := make([]*sessionDoc, len(names))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		next  atomic.Int64
		mu    sync.Mutex
		first error
	)
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
			cancel()
		}
		mu.Unlock()
	}
	for range min(listReaders, len(names)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(names) || ctx.Err() != nil {
					return
				}
				name := names[i]
				b, err := s.read(ctx, name)
				if err != nil {
					fail(err)
					return
				}
				if b == nil {
					continue
				}
				d, err := decodeSessionDoc(b)
				if err != nil {
					fail(fmt.Errorf("%s: %w", name, err))
					return
				}
				if d.Deleted || d.App != req.AppName || (req.UserID != "" && d.User != req.UserID) || name != s.SessionName(d.App, d.User, d.ID) {
					continue
				}
				d.seen, d.Events = len(d.Events), nil
				docs[i] = d
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return docs, nil
}

// Delete deletes a session: its next step is a tombstone that Get and List
// treat as absent. Its earlier steps stay in the log (and can be forked)
// until cairn's retention removes them. Deleting a session that does not
// exist does nothing.
func (s *Service) Delete(ctx context.Context, req *session.DeleteRequest) error {
	app, user, id := req.AppName, req.UserID, req.SessionID
	if app == "" || user == "" || id == "" {
		return fmt.Errorf("adk session service: app_name, user_id, session_id are required, got app_name: %q, user_id: %q, session_id: %q", app, user, id)
	}
	name := s.SessionName(app, user, id)
	err := s.update(ctx, name, cairn.CommitOptions{Status: cairn.Done, Record: record("delete", "")}, func(b []byte, _ any) ([]byte, any, error) {
		if b == nil {
			return nil, nil, errNoCommit
		}
		d, err := decodeSessionDoc(b)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		if d.Deleted {
			return nil, nil, errNoCommit
		}
		next, err := json.Marshal(&sessionDoc{Version: docVersion, App: app, User: user, ID: id,
			Created: d.Created, Updated: platform.Now(ctx), Deleted: true,
			State: map[string]json.RawMessage{}, Events: []json.RawMessage{}})
		return next, nil, err
	})
	if err != nil {
		return fmt.Errorf("adk session service: delete session %q: %w", id, err)
	}
	return nil
}

// AppendEvent stores event as the next step of its session: the event
// (without temp: state keys) appended to the events, its session-scoped
// state delta applied; then its app: and user: deltas to their states.
// Partial events are not stored. A session handed out by this service is
// updated in place, as ADK's runner expects.
func (s *Service) AppendEvent(ctx context.Context, cur session.Session, event *session.Event) error {
	if cur == nil {
		return errors.New("adk session service: append event: session is nil")
	}
	if event == nil {
		return errors.New("adk session service: append event: event is nil")
	}
	if event.Partial {
		return nil
	}
	app, user, id := cur.AppName(), cur.UserID(), cur.ID()
	if err := checkKeys(event.Actions.StateDelta); err != nil {
		return fmt.Errorf("adk session service: append event %q: %w", event.ID, err)
	}
	stored := withoutTemp(event)
	evJSON, err := json.Marshal(stored)
	if err != nil {
		return fmt.Errorf("adk session service: append event %q: encode: %w", event.ID, err)
	}
	appDelta, userDelta, sessDelta := splitDelta(event.Actions.StateDelta)
	name := s.SessionName(app, user, id)
	// A session this service handed out knows how many events it has
	// seen: an append on top of events it has not is refused.
	own, _ := cur.(*adkSession)
	if own != nil {
		own.appending.Lock()
		defer own.appending.Unlock()
	}
	err = s.update(ctx, name, cairn.CommitOptions{Record: record("event", event.ID)}, func(b []byte, parsed any) ([]byte, any, error) {
		if b == nil {
			return nil, nil, notFound(app, user, id)
		}
		d, ok := parsed.(*sessionDoc)
		if !ok {
			var err error
			if d, err = decodeSessionDoc(b); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		if d.Deleted || d.App != app || d.User != user || d.ID != id {
			return nil, nil, notFound(app, user, id)
		}
		if own != nil && len(d.Events) != own.seen {
			return nil, nil, staleSession(app, user, id, len(d.Events), own.seen)
		}
		if d.State == nil {
			d.State = make(map[string]json.RawMessage)
		}
		if err := setValues(d.State, sessDelta); err != nil {
			return nil, nil, err
		}
		d.Events = append(d.Events, evJSON)
		d.Updated = event.Timestamp
		next, err := d.encode()
		return next, d, err
	})
	if err != nil {
		return fmt.Errorf("adk session service: append event %q: %w", event.ID, err)
	}
	if len(appDelta) > 0 {
		if _, err := s.updateScoped(ctx, app, "", appDelta); err != nil {
			return fmt.Errorf("adk session service: append event %q: app state: %w", event.ID, err)
		}
	}
	if len(userDelta) > 0 {
		if _, err := s.updateScoped(ctx, app, user, userDelta); err != nil {
			return fmt.Errorf("adk session service: append event %q: user state: %w", event.ID, err)
		}
	}
	if own != nil {
		own.apply(event, stored)
	}
	return nil
}

// withoutTemp returns event, or a copy of it without temp: state keys.
func withoutTemp(event *session.Event) *session.Event {
	temp := false
	for k := range event.Actions.StateDelta {
		if strings.HasPrefix(k, session.KeyPrefixTemp) {
			temp = true
			break
		}
	}
	if !temp {
		return event
	}
	c := *event
	c.Actions.StateDelta = make(map[string]any, len(event.Actions.StateDelta))
	for k, v := range event.Actions.StateDelta {
		if !strings.HasPrefix(k, session.KeyPrefixTemp) {
			c.Actions.StateDelta[k] = v
		}
	}
	return &c
}

// hinted adds to a limit error (cairn.ErrLimit) what the limit is and how
// to raise it; other errors are returned as they are.
func hinted(err error) error {
	if h := cairn.LimitHint(err); h != "" {
		return fmt.Errorf("%w (%s)", err, h)
	}
	return err
}

// record is the step record: what the step did, for `cairn log`.
func record(op, eventID string) json.RawMessage {
	b, _ := json.Marshal(struct {
		Op    string `json:"adk"`
		Event string `json:"event,omitempty"`
	}{op, eventID})
	return b
}
