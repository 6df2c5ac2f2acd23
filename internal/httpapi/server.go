// Package httpapi serves one cairn workspace as a JSON API over HTTP:
// commit a step, read the head or any step, fork, log, list sessions,
// diff, long-poll for a new step, and answer a session that awaits a
// human. openapi.json in this directory describes every route; a test
// checks the server against it.
//
// Access: with no token the server must listen on a loopback address and
// refuses requests whose Host is not a loopback name (so a web page
// cannot reach it through DNS rebinding). With a token every request
// needs "Authorization: Bearer TOKEN"; a missing or wrong token gets the
// same 401 on every path, so it learns nothing about which sessions exist.
// Token or not, a request that changes something must be JSON
// (Content-Type: application/json) and not come from a web page of
// another origin, so no page can answer a paused session for its user.
//
// Bounds: states and logs stream out; reads and long-polls at once are
// capped (503 with Retry-After beyond); one poller per session serves all
// of its long-polls; idle sessions are forgotten beyond a few dozen; a
// client that stops taking an answer is cut off (SendTimeout); Serve keeps
// at most MaxConns connections open, closing idle ones first, and answers
// in the API's error shape the requests net/http refuses itself.
package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/termtext"
)

// Options configure a Server. Zero values take the defaults.
type Options struct {
	// Token, if set, is the bearer token every request must carry.
	Token string
	// MaxBody bounds a request body in bytes (default 32 MiB).
	MaxBody int64
	// MaxWait bounds a long-poll (default 60 s).
	MaxWait time.Duration
	// PollInterval is how soon a session's poller first re-reads the
	// store for steps written by other processes (default 200 ms); while
	// nothing changes the interval doubles up to MaxPollInterval. Steps
	// committed through this server wake waiters at once.
	PollInterval time.Duration
	// MaxPollInterval bounds the poll interval (default 3.2 s).
	MaxPollInterval time.Duration
	// MaxWaiters bounds the long-polls waiting at once (default 1024);
	// one more gets 503 with Retry-After.
	MaxWaiters int
	// MaxReads bounds the requests that read states, logs or diffs at
	// once (default 8); one more gets 503 with Retry-After.
	MaxReads int
	// BodyTimeout bounds the time a request body takes to arrive in full
	// (default 60 s); a slower one gets 408. It is no bound on the work
	// the request asks for.
	BodyTimeout time.Duration
	// StallTimeout bounds the time a request body may send nothing at
	// all before it has arrived in full (default 10 s); past it the
	// request gets 408. A body arriving holds its bytes of MaxBodies, so
	// one that stopped half sent (a dead network path, a suspended
	// client) would otherwise keep every other body that does not fit
	// beside it waiting until its BodyTimeout. For the same reason a body
	// holding bytes of MaxBodies when another begins to wait for them must
	// from then on keep to the pace that brings MaxBody in BodyTimeout,
	// with StallTimeout to spare, however steadily it trickles in, else
	// 408.
	StallTimeout time.Duration
	// SendTimeout bounds the time each 64 KiB of an answer may wait for
	// the client to take it (default 60 s): a client that stops reading
	// an answer, a large state say, is cut off after it, so that it does
	// not hold a read slot (or anything else) for ever. For the same
	// reason an answer holding a read slot when another read is refused
	// one, or waits for one, has SendTimeout from then to go out in full,
	// however steadily it is taken, else it is cut off.
	SendTimeout time.Duration
	// IdleSessions is how many sessions no request uses the server keeps
	// cached, with their heads, so that an agent's next commit need not
	// re-read its head from the store (default 64).
	IdleSessions int
	// IdleBytes bounds the states the idle sessions keep cached, together,
	// as estimated from the states last committed to them (default
	// 4 × MaxBody): beyond it the least recently used are forgotten too.
	IdleBytes int64
	// MaxBodies bounds the bytes of the request bodies arriving or being
	// acted on at once (default MaxBody, at least MaxBody): a commit holds
	// far more memory than its body while it builds the step, so MaxBody
	// alone bounds one request, not a crowd of them. A body takes its
	// bytes as they arrive; one whose next bytes would go over waits for
	// others to finish (up to BodyTimeout, then 503 with Retry-After),
	// except the first body waiting, which may go over by one body so
	// that bodies half arrived never wait on each other (see budget).
	MaxBodies int64
	// MaxConns bounds the connections Serve keeps open (default 2048).
	// Past it, a new connection takes the place of the one waiting
	// longest for a request (idle after one, or silent since it
	// connected), which is closed; if every one is at work on a request,
	// the new one gets 503 with Retry-After and is closed.
	MaxConns int
}

// Defaults.
const (
	DefaultMaxBody         = 32 << 20
	DefaultMaxWait         = 60 * time.Second
	DefaultPollInterval    = 200 * time.Millisecond
	DefaultMaxPollInterval = 3200 * time.Millisecond
	DefaultMaxWaiters      = 1024
	DefaultMaxReads        = 8
	DefaultIdleSessions    = 64
	DefaultBodyTimeout     = 60 * time.Second
	DefaultStallTimeout    = 10 * time.Second
	DefaultSendTimeout     = 60 * time.Second
	DefaultMaxConns        = 2048
	defaultWait            = 30 * time.Second
	defaultLogLimit        = 100
	maxLogLimit            = 10000
	retryAfter             = "1" // seconds, on 503
)

// Route is one method and path pattern the server answers.
type Route struct {
	Method string
	Path   string // OpenAPI style: /v1/sessions/{session}/head
}

// Server is an http.Handler over one workspace.
type Server struct {
	ws    *cairn.Workspace
	opts  Options
	token [32]byte
	mux   *http.ServeMux
	rts   []Route
	hs    map[Route]http.HandlerFunc // each route's handler, for noRoute
	query map[Route][]string         // each route's query parameters

	sessions *table
	waiters  chan struct{} // a slot per long-poll in progress
	reads    chan struct{} // a slot per heavy read in progress
	readers  *readers      // the answers holding them
	bodies   *budget       // bytes of request bodies in progress
	inFlight atomic.Int64  // requests being answered, for Serve's words when it stops
}

// New returns a server over ws.
func New(ws *cairn.Workspace, opts Options) *Server {
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = DefaultMaxWait
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.MaxPollInterval <= 0 {
		opts.MaxPollInterval = DefaultMaxPollInterval
	}
	opts.MaxPollInterval = max(opts.MaxPollInterval, opts.PollInterval)
	if opts.MaxWaiters <= 0 {
		opts.MaxWaiters = DefaultMaxWaiters
	}
	if opts.MaxReads <= 0 {
		opts.MaxReads = DefaultMaxReads
	}
	if opts.IdleSessions <= 0 {
		opts.IdleSessions = DefaultIdleSessions
	}
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = DefaultBodyTimeout
	}
	if opts.StallTimeout <= 0 {
		opts.StallTimeout = DefaultStallTimeout
	}
	if opts.SendTimeout <= 0 {
		opts.SendTimeout = DefaultSendTimeout
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	opts.MaxBodies = max(opts.MaxBodies, opts.MaxBody)
	if opts.IdleBytes <= 0 {
		opts.IdleBytes = 4 * opts.MaxBody
	}
	s := &Server{
		ws: ws, opts: opts, mux: http.NewServeMux(), hs: map[Route]http.HandlerFunc{}, query: map[Route][]string{},
		sessions: newTable(ws, opts.IdleSessions, opts.IdleBytes, opts.PollInterval, opts.MaxPollInterval),
		waiters:  make(chan struct{}, opts.MaxWaiters),
		reads:    make(chan struct{}, opts.MaxReads),
		readers:  &readers{held: make(map[*sendDeadline]bool)},
		bodies:   newBudget(opts.MaxBodies),
	}
	if opts.Token != "" {
		s.token = sha256.Sum256([]byte(opts.Token))
	}
	s.handle("GET", "/v1/sessions", s.listSessions, "prefix")
	s.handle("GET", "/v1/inbox", s.inbox)
	s.handle("GET", "/v1/diff", s.diff, "a", "b")
	s.handle("POST", "/v1/sessions/{session}/steps", s.commit)
	s.handle("DELETE", "/v1/sessions/{session}", s.remove)
	s.handle("GET", "/v1/sessions/{session}/head", s.head, "state")
	s.handle("GET", "/v1/sessions/{session}/steps/{step}", s.step, "state")
	s.handle("GET", "/v1/sessions/{session}/wait", s.wait, "after", "timeout", "state")
	s.handle("GET", "/v1/sessions/{session}/log", s.log, "from", "limit")
	s.handle("POST", "/v1/sessions/{session}/fork", s.fork)
	s.handle("POST", "/v1/sessions/{session}/reply", s.reply)
	s.mux.HandleFunc("/", s.noRoute)
	return s
}

// noRoute answers a request no route takes: 405 with Allow if its path
// is a route's under another method (PUT on .../steps), else 404; both
// in the API's error shape, as ServeMux's own answers are not.
//
// A path that is a route's under its own method comes here too when a
// segment is only an escaped slash (/v1/sessions/%2F/head): ServeMux
// takes no such segment as a wildcard's value. Its route answers it, so
// that its own checks say what is wrong with the session or step named.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet // ServeMux answers HEAD with GET
	}
	for _, rt := range s.rts {
		if rt.Method == method && matchPath(rt.Path, r.URL.EscapedPath()) {
			setPathValues(r, rt.Path)
			s.hs[rt](w, r)
			return
		}
	}
	var allow []string
	for _, rt := range s.rts {
		if matchPath(rt.Path, r.URL.EscapedPath()) && !slices.Contains(allow, rt.Method) {
			allow = append(allow, rt.Method)
			if rt.Method == http.MethodGet {
				allow = append(allow, http.MethodHead) // ServeMux answers HEAD with GET
			}
		}
	}
	if len(allow) == 0 {
		// Not not_found, the answer for a session with no steps: a
		// client whose URL is wrong (a path prefix, another port) must
		// not take it for a new session.
		writeError(w, http.StatusNotFound, "no_route", fmt.Sprintf("no route %s %s", r.Method, shownPath(r.URL.EscapedPath())))
		return
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	writeError(w, http.StatusMethodNotAllowed, "method_not_allowed",
		fmt.Sprintf("%s %s: this path takes %s", r.Method, shownPath(r.URL.EscapedPath()), strings.Join(allow, ", ")))
}

// matchPath reports whether an escaped request path matches a route's
// path template, in which each {name} stands for one non-empty segment.
func matchPath(tmpl, p string) bool {
	ts, ps := strings.Split(tmpl, "/"), strings.Split(p, "/")
	if len(ts) != len(ps) {
		return false
	}
	for i, t := range ts {
		if strings.HasPrefix(t, "{") {
			if ps[i] == "" {
				return false
			}
		} else if t != ps[i] {
			return false
		}
	}
	return true
}

// setPathValues sets r's path values from its escaped path, which
// matchPath has matched to the route's path template tmpl.
func setPathValues(r *http.Request, tmpl string) {
	ps := strings.Split(r.URL.EscapedPath(), "/")
	for i, t := range strings.Split(tmpl, "/") {
		if name, ok := strings.CutPrefix(t, "{"); ok {
			v, err := url.PathUnescape(ps[i])
			if err != nil {
				v = ps[i]
			}
			r.SetPathValue(strings.TrimSuffix(name, "}"), v)
		}
	}
}

// Routes lists the routes the server answers.
func (s *Server) Routes() []Route { return append([]Route(nil), s.rts...) }

// handle serves method and path with h, which takes the query
// parameters named in query and no other.
func (s *Server) handle(method, path string, h func(w http.ResponseWriter, r *http.Request) error, query ...string) {
	rt := Route{method, path}
	s.rts = append(s.rts, rt)
	s.query[rt] = query
	s.hs[rt] = func(w http.ResponseWriter, r *http.Request) {
		if err := checkParams(r, query); err != nil {
			s.writeErr(w, err)
			return
		}
		// Here, not in ServeHTTP: a method no route takes on a path is
		// 405 (noRoute), whatever its Content-Type; it changes nothing.
		if err := checkSameOrigin(r); err != nil {
			s.writeErr(w, err)
			return
		}
		if r.ContentLength != 0 {
			if r.ContentLength > s.opts.MaxBody {
				// Said before a byte of it is read: the client need not
				// send it, nor the server wait for it.
				s.writeErr(w, &http.MaxBytesError{Limit: s.opts.MaxBody})
				return
			}
			// A body must arrive within BodyTimeout (a slow-loris client
			// would hold the connection for ever), and never stall for
			// StallTimeout; once it has arrived, the deadline is lifted
			// so that the work is not cut off.
			rc := http.NewResponseController(w)
			body := &deadlineBody{ReadCloser: r.Body, rc: rc, end: time.Now().Add(s.opts.BodyTimeout), stall: s.opts.StallTimeout}
			if body.setDeadline() == nil {
				r.Body = body
			} else {
				body = nil
			}
			// The body's bytes are taken from the budget as they arrive,
			// and held until the request is done: a client that trickles
			// its body holds what it has sent, bodies arriving at once
			// are bounded together with those being acted on; one that
			// others wait for must then keep to a pace (see squeeze).
			g := &bodyGate{ReadCloser: r.Body, ctx: r.Context(), b: s.bodies, wait: s.opts.BodyTimeout, deadline: body,
				pace: float64(s.opts.BodyTimeout) / float64(s.opts.MaxBody)}
			defer g.release()
			r.Body = g
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBody)
		sw := &sendDeadline{ResponseWriter: w, rc: http.NewResponseController(w), wait: s.opts.SendTimeout}
		if err := h(sw, r); err != nil {
			s.writeErr(sw, err)
		}
	}
	s.mux.HandleFunc(method+" "+path, s.hs[rt])
}

// sendDeadline is a ResponseWriter whose every write (of at most
// sendPiece bytes) must be taken by the client within wait: the
// connection's write deadline moves on before each one. A handler may work or long-poll for longer than wait
// before it writes; only a client that stops reading is cut off. Once
// squeezed (others wait for the read slot its answer holds), the
// writes must also be done within wait of the squeeze.
type sendDeadline struct {
	http.ResponseWriter
	rc       *http.ResponseController
	wait     time.Duration
	squeezed atomic.Int64 // when the answer must have gone out, in Unix ns; 0 if not squeezed
}

// setDeadline moves the write deadline on, to wait from now or the
// squeeze's end if sooner.
func (w *sendDeadline) setDeadline() {
	d := time.Now().Add(w.wait)
	if sq := w.squeezed.Load(); sq != 0 && sq < d.UnixNano() {
		d = time.Unix(0, sq)
	}
	_ = w.rc.SetWriteDeadline(d)
}

// squeeze gives the answer wait from now to go out in full, reads not
// moving it on; a write under way keeps its own deadline, which is sooner.
func (w *sendDeadline) squeeze() {
	w.squeezed.CompareAndSwap(0, time.Now().Add(w.wait).UnixNano())
}

func (w *sendDeadline) WriteHeader(code int) {
	w.setDeadline()
	w.ResponseWriter.WriteHeader(code)
}

// sendPiece is the most one write deadline covers: a large write goes
// out in pieces, each with wait to go, so a slow client that keeps
// reading is never cut off in the middle of a big one.
const sendPiece = 64 << 10

func (w *sendDeadline) Write(p []byte) (int, error) {
	var n int
	for len(p) > 0 {
		w.setDeadline()
		k, err := w.ResponseWriter.Write(p[:min(len(p), sendPiece)])
		n += k
		if err != nil {
			return n, err
		}
		p = p[k:]
	}
	return n, nil
}

// Unwrap returns the ResponseWriter underneath, for ResponseController.
func (w *sendDeadline) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// bodyGate is a request body that takes the bytes it reads from the
// server's budget, and gives them back when the request is done.
type bodyGate struct {
	io.ReadCloser
	ctx      context.Context
	b        *budget
	wait     time.Duration
	deadline *deadlineBody // the body's read deadline, if it has one
	pace     float64       // ns a byte may take once squeezed: BodyTimeout for MaxBody
	held     atomic.Int64  // bytes read and taken from b
	arriving bool          // noted in b.arriving
}

// Read reads the next bytes of the body and takes as many from the
// budget, waiting up to the gate's wait for them (then 503).
func (g *bodyGate) Read(p []byte) (int, error) {
	n, err := g.ReadCloser.Read(p[:min(len(p), bodyPiece, int(g.b.size))])
	if n > 0 {
		var holder *bodyGate
		if g.held.Load() > 0 {
			holder = g
		}
		if aerr := g.b.acquire(g.ctx, int64(n), g.wait, holder); aerr != nil {
			return 0, aerr
		}
		g.held.Add(int64(n))
		if !g.arriving && err == nil {
			g.arriving = true
			g.b.arrive(g)
		}
	}
	if err != nil && g.arriving {
		g.arriving = false
		g.b.left(g)
	}
	return n, err
}

// waited moves on the pace squeeze asks by the time since start, which
// the body spent waiting for the budget.
func (g *bodyGate) waited(start time.Time) {
	if g.deadline != nil {
		g.deadline.mu.Lock()
		if !g.deadline.squeezed.IsZero() {
			g.deadline.squeezed = g.deadline.squeezed.Add(time.Since(start))
		}
		g.deadline.mu.Unlock()
	}
}

// squeeze asks the body, others waiting for the bytes it holds, to keep
// from now on to the pace that brings MaxBody in BodyTimeout, with
// StallTimeout to spare: a body that keeps to the pace the server asks
// of the largest is never cut off by it; one that trickles is, however
// much it declared or holds.
func (g *bodyGate) squeeze() {
	if g.deadline != nil {
		g.deadline.squeeze(time.Now(), g.pace)
	}
}

// bodyPiece is the most of a body read before its bytes are taken from
// the budget: what a request may have in memory beyond its share, of the
// order of its connection's own buffers.
const bodyPiece = 16 << 10

func (g *bodyGate) release() {
	if g.deadline != nil {
		// The request is done: a squeeze now would set a deadline for
		// whatever the connection reads next.
		g.deadline.mu.Lock()
		g.deadline.done = true
		g.deadline.mu.Unlock()
	}
	if g.arriving {
		g.arriving = false
		g.b.left(g)
	}
	g.b.release(g.held.Swap(0), g)
}

// deadlineBody is a request body under a read deadline, lifted once the
// body has been read to its end: end, or stall from now if sooner, moved
// on before each read; or, once squeezed, the time by which the bytes
// read so far had to come at the pace asked, if sooner.
type deadlineBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	end   time.Time
	stall time.Duration

	mu       sync.Mutex // for the fields below, and the deadline set
	got      int64      // bytes read
	squeezed time.Time  // once squeezed, when the bytes read then had to be in, StallTimeout on
	base     int64      // the bytes read then
	pace     float64    // ns each byte after them may take
	at       time.Time  // the deadline set
	bound    string     // which it is: "stall", "squeeze" or "end"
	done     bool       // read to its end (the deadline lifted), or the request done
}

func (b *deadlineBody) setDeadline() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.at, b.bound = time.Now().Add(b.stall), "stall"
	if b.end.Before(b.at) {
		b.at, b.bound = b.end, "end"
	}
	if sq := b.squeezeDeadline(); !sq.IsZero() && sq.Before(b.at) {
		b.at, b.bound = sq, "squeeze"
	}
	return b.rc.SetReadDeadline(b.at)
}

// squeezeDeadline is when the next byte must have come at the pace the
// squeeze asks, or zero if not squeezed. b.mu must be held.
func (b *deadlineBody) squeezeDeadline() time.Time {
	if b.squeezed.IsZero() {
		return time.Time{}
	}
	return b.squeezed.Add(time.Duration(float64(b.got-b.base) * b.pace))
}

// squeeze asks the body to keep from now on to pace (ns a byte), with
// its StallTimeout to spare, and moves the deadline set (of a read
// waiting, say) on to what that asks if sooner.
func (b *deadlineBody) squeeze(now time.Time, pace float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done || !b.squeezed.IsZero() {
		return
	}
	b.squeezed, b.base, b.pace = now.Add(b.stall), b.got, pace
	if sq := b.squeezeDeadline(); sq.Before(b.at) {
		b.at, b.bound = sq, "squeeze"
		_ = b.rc.SetReadDeadline(sq)
	}
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	_ = b.setDeadline()
	n, err := b.ReadCloser.Read(p)
	b.mu.Lock()
	b.got += int64(n)
	b.mu.Unlock()
	if errors.Is(err, io.EOF) {
		b.mu.Lock()
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
		b.mu.Unlock()
	} else if errors.Is(err, os.ErrDeadlineExceeded) {
		// With or without bytes: a chunked body read to the middle of a
		// chunk returns those bytes with the error.
		b.mu.Lock()
		bound, got := b.bound, b.got
		b.mu.Unlock()
		switch bound {
		case "stall":
			err = &stalledError{got: got, after: b.stall, err: err}
		case "squeeze":
			err = &apiError{status: http.StatusRequestTimeout, code: "timeout", msg: fmt.Sprintf(
				"request body: other requests waited for the room for request bodies it held, and it came too slowly then (slower than the pace of the server's limit of a body's size in its time to arrive, with %v to spare): send it at once, not in a trickle", b.stall)}
		}
	}
	return n, err
}

// stalledError is the error of a body that sent nothing for after,
// once got bytes of it had come.
type stalledError struct {
	got   int64
	after time.Duration
	err   error
}

func (e *stalledError) Error() string {
	return fmt.Sprintf("request body stalled for %v after %d bytes: %v", e.after, e.got, e.err)
}
func (e *stalledError) Unwrap() error { return e.err }

// ServeHTTP checks access, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	// A fresh write deadline for each request: one left by the previous
	// request of a kept-alive connection may have passed. Routes move it
	// on before each write (sendDeadline).
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.opts.SendTimeout))
	if r.ContentLength != 0 {
		// An answer given before the body is read (401, 403, 415, 404,
		// 405, a bad parameter) goes out only once net/http has read the
		// body to throw it away, and it reads with no deadline of its
		// own: a client that declared a body and sent none held its
		// answer, connection and goroutine for ever. A body must start
		// within StallTimeout, as it must once read (handle's
		// deadlineBody moves this deadline on with each read); then the
		// answer goes out and the connection is closed.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.opts.StallTimeout))
	}
	if s.opts.Token != "" {
		got, ok := bearer(r.Header.Get("Authorization"))
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], s.token[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="cairn"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", "a valid bearer token is required")
			return
		}
	} else if !loopbackHost(r.Host) {
		writeError(w, http.StatusForbidden, "forbidden", "without a token the server answers only requests addressed to a loopback host")
		return
	}
	if r.RequestURI == "*" {
		// OPTIONS *: a request of the server as a whole, which takes none.
		writeError(w, http.StatusNotFound, "no_route", fmt.Sprintf("no route %s *: the server takes no request of itself as a whole; its routes are under /v1/", r.Method))
		return
	}
	if !strings.HasPrefix(r.URL.Path, "/") {
		// CONNECT host:port: no path to clean, nor any route to take it.
		writeError(w, http.StatusNotFound, "no_route", fmt.Sprintf("no route %s %s: this server is no proxy; its routes are under /v1/", r.Method, shownPath(r.RequestURI)))
		return
	}
	if p := r.URL.EscapedPath(); p != cleanPath(p) {
		// ServeMux would redirect it (307, which keeps the method and
		// body) to another route: DELETE /v1/sessions/s/steps/.. would
		// land on DELETE /v1/sessions/s.
		writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf(
			"path %s: empty, '.' and '..' segments are not taken (no session is named '.' or '..')", shownPath(p)))
		return
	}
	if err := checkQuery(r.URL.RawQuery); err != nil {
		s.writeErr(w, err)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// checkQuery refuses a query string that does not parse (net/url drops
// such pairs without a word, so ?limit=%zz read as no limit) or that
// gives a parameter twice (of which the handlers would read the first).
func checkQuery(raw string) error {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return badRequest("query string %s: %v", termtext.Quote(raw), err)
	}
	for k, v := range q {
		if len(v) > 1 {
			return badRequest("query parameter %s is given %d times; give it once", k, len(v))
		}
	}
	return nil
}

// checkParams refuses a query parameter the route does not take (of
// which a misspelt ?limt=5 or ?State=false was read as no parameter at
// all: the whole log, the whole state), as unknown fields of a body are.
func checkParams(r *http.Request, takes []string) error {
	for k := range r.URL.Query() {
		if slices.Contains(takes, k) {
			continue
		}
		if len(takes) == 0 {
			return badRequest("query parameter %s: %s %s takes no query parameters", termtext.Quote(k), r.Method, shownPath(r.URL.EscapedPath()))
		}
		return badRequest("query parameter %s: unknown (this path takes %s; names are case-sensitive)", termtext.Quote(k), strings.Join(takes, ", "))
	}
	return nil
}

// cleanPath is p with empty, "." and ".." segments resolved, keeping a
// trailing slash, as ServeMux cleans paths.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// bearer returns the token of an Authorization header of the Bearer
// scheme, whose name is case-insensitive (RFC 9110 section 11.1).
func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimLeft(token, " "), true
}

// readers keeps the answers that hold read slots, so that a read
// refused one, or waiting for one, can squeeze them: else a client that
// took a large state slowly, never leaving a piece of it unread for
// SendTimeout (about 1 KB a second by default), held its slot until the
// whole answer had gone out (hours), and MaxReads such clients left
// every other read 503 all that while.
type readers struct {
	mu   sync.Mutex
	held map[*sendDeadline]bool // true once squeezed
}

// hold notes that the answer w sends holds a read slot, which release
// frees; it returns the function that frees it and forgets w.
func (rs *readers) hold(w http.ResponseWriter, release func()) func() {
	sd, ok := w.(*sendDeadline)
	if !ok {
		return release
	}
	rs.mu.Lock()
	rs.held[sd] = false
	rs.mu.Unlock()
	return func() {
		rs.mu.Lock()
		delete(rs.held, sd)
		rs.mu.Unlock()
		release()
	}
}

// squeeze gives each answer holding a read slot SendTimeout from now to
// go out in full.
func (rs *readers) squeeze() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for sd, squeezed := range rs.held {
		if !squeezed {
			rs.held[sd] = true
			sd.squeeze()
		}
	}
}

// readSlot takes a read slot for the answer w sends, or answers 503 and
// squeezes the answers holding the slots.
func (s *Server) readSlot(w http.ResponseWriter) (release func(), err error) {
	release, err = slot(s.reads, "reads of states, logs and diffs")
	if err != nil {
		s.readers.squeeze()
		return nil, err
	}
	return s.readers.hold(w, release), nil
}

// slot takes a slot of sem for a request, or answers 503: the server is
// busy, try again after Retry-After seconds.
func slot(sem chan struct{}, what string) (release func(), err error) {
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, nil
	default:
		return nil, &apiError{status: http.StatusServiceUnavailable, code: "busy",
			msg: fmt.Sprintf("the server is at its limit of %d %s at once; retry shortly", cap(sem), what)}
	}
}

// CheckListen refuses to listen on a non-loopback address without a token.
func CheckListen(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if token == "" && !loopbackHost(host) {
		return fmt.Errorf("listen address %q is not loopback: set a token (--token or $CAIRN_TOKEN) to serve beyond this machine", addr)
	}
	return nil
}

// loopbackHost reports whether host (optionally with a port) names this machine's loopback.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// shownPath is p, a path (or another part of a request line or header)
// as a message names it: whole up to 128 bytes, else by its first 64
// and its length, not echoed whole (a path may run to 64 KiB, and an
// agent reads its errors into its context).
func shownPath(p string) string {
	if len(p) <= 128 {
		return p
	}
	cut := 64
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", p[:cut], len(p))
}
