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
package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/hitl"
)

// Options configure a Server. Zero values take the defaults.
type Options struct {
	// Token, if set, is the bearer token every request must carry.
	Token string
	// MaxBody bounds a request body in bytes (default 32 MiB).
	MaxBody int64
	// MaxWait bounds a long-poll (default 60 s).
	MaxWait time.Duration
	// PollInterval is how often a long-poll re-reads the store for steps
	// written by other processes (default 200 ms). Steps committed
	// through this server wake waiters at once.
	PollInterval time.Duration
}

// Defaults.
const (
	DefaultMaxBody      = 32 << 20
	DefaultMaxWait      = 60 * time.Second
	DefaultPollInterval = 200 * time.Millisecond
	defaultWait         = 30 * time.Second
	defaultLogLimit     = 100
	maxLogLimit         = 10000
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

	mu      sync.Mutex
	waiters map[string]chan struct{} // closed when the session gets a step through this server
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
	s := &Server{ws: ws, opts: opts, mux: http.NewServeMux(), waiters: map[string]chan struct{}{}}
	if opts.Token != "" {
		s.token = sha256.Sum256([]byte(opts.Token))
	}
	s.handle("GET", "/v1/sessions", s.listSessions)
	s.handle("GET", "/v1/inbox", s.inbox)
	s.handle("GET", "/v1/diff", s.diff)
	s.handle("POST", "/v1/sessions/{session}/steps", s.commit)
	s.handle("GET", "/v1/sessions/{session}/head", s.head)
	s.handle("GET", "/v1/sessions/{session}/steps/{step}", s.step)
	s.handle("GET", "/v1/sessions/{session}/wait", s.wait)
	s.handle("GET", "/v1/sessions/{session}/log", s.log)
	s.handle("POST", "/v1/sessions/{session}/fork", s.fork)
	s.handle("POST", "/v1/sessions/{session}/reply", s.reply)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no route %s %s", r.Method, r.URL.Path))
	})
	return s
}

// Routes lists the routes the server answers.
func (s *Server) Routes() []Route { return append([]Route(nil), s.rts...) }

func (s *Server) handle(method, path string, h func(w http.ResponseWriter, r *http.Request) error) {
	s.rts = append(s.rts, Route{method, path})
	s.mux.HandleFunc(method+" "+path, func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBody)
		if err := h(w, r); err != nil {
			writeErr(w, err)
		}
	})
}

// ServeHTTP checks access, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.opts.Token != "" {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
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
	s.mux.ServeHTTP(w, r)
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

// apiError is an error with an HTTP status and a code.
type apiError struct {
	status int
	code   string
	msg    string
	head   *uint64
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, a ...any) error {
	return &apiError{status: http.StatusBadRequest, code: "bad_request", msg: fmt.Sprintf(format, a...)}
}

type errorBody struct {
	Code  string  `json:"code"`
	Error string  `json:"error"`
	Head  *uint64 `json:"head,omitempty"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, errorBody{Code: code, Error: msg})
}

// writeErr maps an error onto a status and a JSON body.
func writeErr(w http.ResponseWriter, err error) {
	var ae *apiError
	var mbe *http.MaxBytesError
	var ce *cairn.ConflictError
	switch {
	case errors.As(err, &ae):
		writeJSON(w, ae.status, errorBody{Code: ae.code, Error: ae.msg, Head: ae.head})
	case errors.As(err, &mbe):
		writeError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("request body exceeds %d bytes", mbe.Limit))
	case errors.As(err, &ce):
		head := ce.Head
		writeJSON(w, http.StatusConflict, errorBody{Code: "conflict", Error: err.Error(), Head: &head})
	case errors.Is(err, cairn.ErrConflict):
		writeError(w, http.StatusConflict, "conflict", err.Error())
	case errors.Is(err, cairn.ErrNotFound):
		writeError(w, http.StatusNotFound, "not_found", err.Error())
	case errors.Is(err, cairn.ErrInvalid):
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
	case errors.Is(err, context.Canceled):
		// The client went away; nobody reads the answer.
	default:
		writeError(w, http.StatusInternalServerError, "internal", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // states go back byte for byte
	_ = enc.Encode(v)
}

// decode reads a JSON request body into v, refusing unknown fields and trailing data.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return badRequest("request body: %v", err)
	}
	if dec.More() {
		return badRequest("request body: data after the JSON object")
	}
	return nil
}

func (s *Server) session(r *http.Request) (*cairn.Session, error) {
	sess, err := s.ws.Session(r.PathValue("session"))
	if err != nil {
		return nil, badRequest("%v", err)
	}
	return sess, nil
}

// StepInfo describes one step. State is set on reads that ask for it.
type StepInfo struct {
	Session string          `json:"session"`
	Step    uint64          `json:"step"`
	ID      string          `json:"id"`
	Parent  *string         `json:"parent"`
	Origin  *string         `json:"origin,omitempty"`
	Status  string          `json:"status"`
	Time    string          `json:"time"`
	Kind    string          `json:"kind"`
	Record  json.RawMessage `json:"record"`
	State   json.RawMessage `json:"state,omitempty"`
	Files   []FileEntry     `json:"files,omitempty"`
}

// FileEntry is one entry of a directory state.
type FileEntry struct {
	Path string `json:"path"`
	Type string `json:"type"` // file, exec, symlink or dir
	Size int64  `json:"size"`
}

func modeName(m cairn.FileMode) string {
	switch m {
	case cairn.ModeExec:
		return "exec"
	case cairn.ModeSymlink:
		return "symlink"
	case cairn.ModeDir:
		return "dir"
	}
	return "file"
}

func refString(r *cairn.StepRef) *string {
	if r == nil {
		return nil
	}
	s := fmt.Sprintf("%s@%d", r.Session, r.Number)
	return &s
}

func info(st *cairn.Step) StepInfo {
	rec := st.Record
	if rec == nil {
		rec = json.RawMessage("null")
	}
	return StepInfo{
		Session: st.Session, Step: st.Number, ID: st.ID.String(),
		Parent: refString(st.Parent), Origin: refString(st.Origin),
		Status: st.Status.String(), Time: st.Time.Format(time.RFC3339Nano), Kind: st.Kind.String(),
		Record: rec,
	}
}

// withState adds the step's state: JSON, or a directory's listing.
func withState(ctx context.Context, st *cairn.Step, r *http.Request) (StepInfo, error) {
	in := info(st)
	if r.URL.Query().Get("state") == "false" {
		return in, nil
	}
	if st.Kind == cairn.KindJSON {
		doc, err := st.JSON(ctx)
		if err != nil {
			return in, err
		}
		in.State = doc
		return in, nil
	}
	files, err := st.Files(ctx)
	if err != nil {
		return in, err
	}
	in.Files = make([]FileEntry, 0, len(files))
	for _, f := range files {
		in.Files = append(in.Files, FileEntry{f.Path, modeName(f.Mode), f.Size})
	}
	return in, nil
}

// commitRequest is the body of POST /v1/sessions/{session}/steps.
type commitRequest struct {
	State  json.RawMessage `json:"state"`
	Record json.RawMessage `json:"record,omitempty"`
	Status string          `json:"status,omitempty"`
	Expect *uint64         `json:"expect,omitempty"`
}

func (s *Server) commit(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	var req commitRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if len(req.State) == 0 || string(req.State) == "null" {
		return badRequest("request body: state is required")
	}
	opts := cairn.CommitOptions{Expect: req.Expect}
	if req.Status != "" {
		if opts.Status, err = cairn.ParseStatus(req.Status); err != nil {
			return badRequest("%v", err)
		}
	}
	if len(req.Record) > 0 && string(req.Record) != "null" {
		opts.Record = req.Record
	}
	st, err := sess.Commit(r.Context(), cairn.JSON(req.State), opts)
	if err != nil {
		return err
	}
	s.notify(sess.Name())
	writeJSON(w, http.StatusCreated, info(st))
	return nil
}

func (s *Server) head(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	st, err := sess.Head(r.Context())
	if err != nil {
		return err
	}
	return writeStep(w, r, st)
}

func (s *Server) step(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	n, err := strconv.ParseUint(r.PathValue("step"), 10, 64)
	if err != nil || n == 0 {
		return badRequest("step %q: want a number >= 1", r.PathValue("step"))
	}
	st, err := sess.Step(r.Context(), n)
	if err != nil {
		return err
	}
	return writeStep(w, r, st)
}

// writeStep answers with st and, unless the request says otherwise, its state.
func writeStep(w http.ResponseWriter, r *http.Request, st *cairn.Step) error {
	in, err := withState(r.Context(), st, r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, in)
	return nil
}

// changed returns a channel closed at the next commit through this server to session.
func (s *Server) changed(session string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.waiters[session]
	if !ok {
		ch = make(chan struct{})
		s.waiters[session] = ch
	}
	return ch
}

func (s *Server) notify(session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch, ok := s.waiters[session]; ok {
		close(ch)
		delete(s.waiters, session)
	}
}

// wait answers with the head once it is past step "after": at once if it
// already is, else when a step lands (through this server, or found by
// polling the store), or 204 when the timeout passes.
func (s *Server) wait(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	after, err := strconv.ParseUint(q.Get("after"), 10, 64)
	if err != nil {
		return badRequest("after %q: want a step number (0 for any step)", q.Get("after"))
	}
	timeout := defaultWait
	if t := q.Get("timeout"); t != "" {
		secs, err := strconv.ParseFloat(t, 64)
		if err != nil || secs < 0 || math.IsNaN(secs) || math.IsInf(secs, 0) {
			return badRequest("timeout %q: want seconds >= 0", t)
		}
		timeout = time.Duration(secs * float64(time.Second))
	}
	timeout = min(timeout, s.opts.MaxWait)
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	tick := time.NewTicker(s.opts.PollInterval)
	defer tick.Stop()
	for {
		ch := s.changed(sess.Name())
		st, err := sess.Head(ctx)
		switch {
		case err == nil && st.Number > after:
			return writeStep(w, r, st)
		case err != nil && !errors.Is(err, cairn.ErrNotFound) && ctx.Err() == nil:
			return err
		}
		select {
		case <-ctx.Done():
			if r.Context().Err() != nil {
				return r.Context().Err()
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		case <-ch:
		case <-tick.C:
		}
	}
}

func (s *Server) log(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	limit := defaultLogLimit
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > maxLogLimit {
			return badRequest("limit %q: want 1 to %d", l, maxLogLimit)
		}
		limit = n
	}
	var st *cairn.Step
	if f := q.Get("from"); f != "" {
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil || n == 0 {
			return badRequest("from %q: want a step number >= 1", f)
		}
		st, err = sess.Step(r.Context(), n)
		if err != nil {
			return err
		}
	} else if st, err = sess.Head(r.Context()); err != nil {
		return err
	}
	steps := []StepInfo{}
	errEnough := errors.New("enough")
	err = st.Log(r.Context(), func(st *cairn.Step) error {
		if len(steps) == limit {
			return errEnough
		}
		steps = append(steps, info(st))
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"steps": steps})
	return nil
}

// sessionInfo is one entry of GET /v1/sessions.
type sessionInfo struct {
	Session string `json:"session"`
	Head    uint64 `json:"head"`
	ID      string `json:"id"`
	Status  string `json:"status"`
	Time    string `json:"time"`
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) error {
	names, err := s.ws.SessionNames(r.Context())
	if err != nil {
		return err
	}
	out := []sessionInfo{}
	for _, name := range names {
		sess, err := s.ws.Session(name)
		if err != nil {
			continue
		}
		head, err := sess.Head(r.Context())
		if errors.Is(err, cairn.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		out = append(out, sessionInfo{name, head.Number, head.ID.String(), head.Status.String(), head.Time.Format(time.RFC3339Nano)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": out})
	return nil
}

func (s *Server) inbox(w http.ResponseWriter, r *http.Request) error {
	p, err := hitl.Inbox(r.Context(), s.ws)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"pending": p})
	return nil
}

func (s *Server) diff(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var steps [2]*cairn.Step
	for i, k := range []string{"a", "b"} {
		ref := q.Get(k)
		if ref == "" {
			return badRequest("query parameter %s is required: SESSION or SESSION@N", k)
		}
		name, _, _ := strings.Cut(ref, "@")
		if err := cairn.ValidSession(name); err != nil {
			return badRequest("%s: %v", k, err)
		}
		st, err := s.ws.Resolve(r.Context(), ref)
		if err != nil {
			if !errors.Is(err, cairn.ErrNotFound) {
				return badRequest("%s: %v", k, err)
			}
			return err
		}
		steps[i] = st
	}
	changes, err := s.ws.Diff(r.Context(), steps[0], steps[1])
	if err != nil {
		return err
	}
	if changes == nil {
		changes = []cairn.Change{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"a": steps[0].String(), "b": steps[1].String(), "changes": changes})
	return nil
}

// forkRequest is the body of POST /v1/sessions/{session}/fork.
type forkRequest struct {
	Step *uint64 `json:"step,omitempty"` // default: the head
	To   string  `json:"to"`
}

func (s *Server) fork(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	var req forkRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if err := cairn.ValidSession(req.To); err != nil {
		return badRequest("to: %v", err)
	}
	var from *cairn.Step
	if req.Step != nil {
		if *req.Step == 0 {
			return badRequest("step: want a number >= 1")
		}
		from, err = sess.Step(r.Context(), *req.Step)
	} else {
		from, err = sess.Head(r.Context())
	}
	if err != nil {
		return err
	}
	st, err := s.ws.Fork(r.Context(), from, req.To)
	if err != nil {
		return err
	}
	s.notify(req.To)
	writeJSON(w, http.StatusCreated, info(st))
	return nil
}

// replyRequest is the body of POST /v1/sessions/{session}/reply.
type replyRequest struct {
	Input json.RawMessage `json:"input"`
}

func (s *Server) reply(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	var req replyRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if len(req.Input) == 0 {
		return badRequest("request body: input is required")
	}
	if len(req.Input) > hitl.MaxInput {
		return &apiError{status: http.StatusRequestEntityTooLarge, code: "too_large", msg: fmt.Sprintf("input exceeds %d bytes", hitl.MaxInput)}
	}
	st, err := hitl.Reply(r.Context(), sess, req.Input)
	if err != nil {
		return err
	}
	s.notify(sess.Name())
	writeJSON(w, http.StatusCreated, info(st))
	return nil
}
