package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/hitl"
	"github.com/cairnlog/cairn/internal/jsontext"
	"github.com/cairnlog/cairn/internal/termtext"
)

// session returns the table entry of the request's {session}; the caller
// must release it.
func (s *Server) session(r *http.Request) (*entry, error) {
	return s.sessions.acquire(r.PathValue("session"))
}

// StepInfo describes one step. State or Files follow on reads that ask
// for the state.
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
	// IdempotencyKey is the Idempotency-Key the commit that wrote the
	// step was sent with, if any.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// Replayed is true on a commit's or reply's answer when an earlier
	// request with the same Idempotency-Key had written the step: this one wrote
	// nothing (the Idempotent-Replayed header says so too).
	Replayed bool `json:"replayed,omitempty"`
	// Truncated is true on the oldest step of a log whose history was
	// pruned below it: the step its parent names is not in the history,
	// so a reader paging on stops here.
	Truncated bool `json:"truncated,omitempty"`
}

// FileEntry is one entry of a directory state.
type FileEntry struct {
	Path string `json:"path"`
	// PathBytes is the exact bytes of a name that is not UTF-8 (Path
	// then has U+FFFD for them), else left out.
	PathBytes []byte `json:"path_bytes,omitempty"`
	Type      string `json:"type"` // file, exec, symlink or dir
	Size      int64  `json:"size"`
}

// Change is one change of a diff: cairn.Change, with a file name that
// is not UTF-8 given exactly, as FileEntry gives it.
type Change struct {
	Path      string           `json:"path"`
	PathBytes []byte           `json:"path_bytes,omitempty"`
	Kind      cairn.ChangeKind `json:"kind"`
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
		Record: rec, IdempotencyKey: st.IdempotencyKey, Replayed: st.Replayed,
		Truncated: st.Truncated,
	}
}

// isJSON reports whether st holds a JSON state (else a directory).
func isJSON(st *cairn.Step) bool { return st.Kind == cairn.KindJSON }

// encode writes v as one line of JSON without HTML escaping.
func encode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeStepTo writes st as a JSON object to w, with its state streamed
// from the store (never held whole) when withState.
func writeStepTo(ctx context.Context, w io.Writer, st *cairn.Step, withState bool) error {
	var head bytes.Buffer
	if err := encode(&head, info(st)); err != nil {
		return err
	}
	// Reopen the object to append the state.
	obj := bytes.TrimSuffix(bytes.TrimRight(head.Bytes(), "\n"), []byte("}"))
	if _, err := w.Write(obj); err != nil {
		return err
	}
	if withState {
		if isJSON(st) {
			if _, err := io.WriteString(w, `,"state":`); err != nil {
				return err
			}
			if err := st.WriteJSON(ctx, w); err != nil {
				return err
			}
		} else {
			files, err := st.Files(ctx)
			if err != nil {
				return err
			}
			if _, err := io.WriteString(w, `,"files":[`); err != nil {
				return err
			}
			for i, f := range files {
				if i > 0 {
					if _, err := io.WriteString(w, ","); err != nil {
						return err
					}
				}
				if err := encode(w, FileEntry{f.Path, jsontext.NameBytes(f.Path), modeName(f.Mode), f.Size}); err != nil {
					return err
				}
			}
			if _, err := io.WriteString(w, "]"); err != nil {
				return err
			}
		}
	}
	_, err := io.WriteString(w, "}\n")
	return err
}

// stateParam reads ?state=: true (the default), false, 1 or 0.
func stateParam(r *http.Request) (bool, error) {
	q := r.URL.Query()
	if !q.Has("state") {
		return true, nil
	}
	switch v := q.Get("state"); v {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	default:
		return false, badRequest("state %s: want true, false, 1 or 0", termtext.Quote(v))
	}
}

// writeStep answers 200 with st and, if withState, its state, streamed.
// Reads of states take a read slot: at once or 503 unless wait (a
// long-poll's answer), which queues for one, and answers 204 as the
// other long-polls do if the server begins to stop meanwhile.
func (s *Server) writeStep(w http.ResponseWriter, r *http.Request, st *cairn.Step, withState, wait bool) error {
	if withState {
		var release func()
		if wait {
			select {
			case s.reads <- struct{}{}:
			default:
				// It waits: the answers holding the slots must go out soon.
				s.readers.squeeze()
				select {
				case s.reads <- struct{}{}:
				case <-r.Context().Done():
					return r.Context().Err()
				case <-stoppingDone(r):
					w.WriteHeader(http.StatusNoContent)
					return nil
				}
			}
			release = s.readers.hold(w, func() { <-s.reads })
		} else {
			var err error
			if release, err = s.readSlot(w); err != nil {
				return err
			}
		}
		defer release()
	}
	sw := &streamer{w: w}
	return sw.finish(writeStepTo(r.Context(), sw, st, withState))
}

// commitRequest is the body of POST /v1/sessions/{session}/steps.
type commitRequest struct {
	State  json.RawMessage `json:"state"`
	Patch  json.RawMessage `json:"patch,omitempty"`
	Record json.RawMessage `json:"record,omitempty"`
	// Status is nil when left out or null; "" is no status, refused
	// (it was taken for running: a caller's unset variable, say).
	Status *string `json:"status,omitempty"`
	Expect *uint64 `json:"expect,omitempty"`
}

var commitFields = []field{
	{"state", "the whole state, any JSON value"},
	{"patch", "a JSON Patch: an array of operations applied to the head's state"},
	{"record", "any JSON value"},
	{"status", "running, awaiting_input or done"},
	{"expect", "a non-negative integer step number (the head the commit expects; 0: a new session)"},
}

func (s *Server) commit(w http.ResponseWriter, r *http.Request) error {
	e, err := s.session(r)
	if err != nil {
		return err
	}
	defer s.sessions.release(e)
	var req commitRequest
	if err := decode(r, &req, commitFields...); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"state", req.State}, {"patch", req.Patch}, {"record", req.Record}} {
		if err := checkText(f.name, f.raw); err != nil {
			return err
		}
	}
	hasState := len(req.State) > 0 && string(req.State) != "null"
	hasPatch := len(req.Patch) > 0 && string(req.Patch) != "null"
	switch {
	case hasState && hasPatch:
		return badRequest("give state or patch, not both")
	case !hasState && !hasPatch:
		return badRequest("state is required: the whole state, any JSON value but null (or patch: a JSON Patch to apply to the head's state)")
	case hasPatch && req.Patch[0] != '[':
		return badRequest("patch: want a JSON array of operations")
	}
	state := cairn.JSON(req.State)
	if hasPatch {
		state = cairn.Patch(req.Patch)
	}
	opts := cairn.CommitOptions{Expect: req.Expect}
	if opts.IdempotencyKey, err = idempotencyKey(r); err != nil {
		return err
	}
	if req.Status != nil {
		if opts.Status, err = cairn.ParseStatus(*req.Status); err != nil {
			return badRequest("status %s: want running, awaiting_input or done", termtext.Quote(*req.Status))
		}
	}
	if len(req.Record) > 0 && string(req.Record) != "null" {
		if len(req.Record) > cairn.MaxRecordBytes {
			// Not the store's read limits (422): no setting raises it.
			return &apiError{status: http.StatusRequestEntityTooLarge, code: "too_large",
				msg: fmt.Sprintf("record: %d bytes, more than the %d a step record may hold", len(req.Record), cairn.MaxRecordBytes)}
		}
		opts.Record = req.Record
	}
	st, err := e.sess.Commit(r.Context(), state, opts)
	if err != nil {
		return err
	}
	if st.Replayed {
		w.Header().Set(replayedHeader, "true")
	} else {
		s.sessions.weigh(e, int64(len(req.State)+len(req.Patch)), hasPatch)
	}
	s.sessions.publish(e, st)
	writeJSON(w, http.StatusCreated, info(st))
	return nil
}

// replayedHeader marks the answer to a commit or reply that an earlier
// request with the same Idempotency-Key had already written.
const replayedHeader = "Idempotent-Replayed"

// idempotencyKey returns the request's Idempotency-Key header ("" if
// none), refusing a key no step could store, or more than one.
func idempotencyKey(r *http.Request) (string, error) {
	keys := r.Header.Values("Idempotency-Key")
	switch {
	case len(keys) == 0:
		return "", nil
	case len(keys) > 1:
		return "", badRequest("Idempotency-Key: give one key, not %d", len(keys))
	case cairn.ValidIdempotencyKey(keys[0]) != nil:
		return "", badRequest("Idempotency-Key %s: want %s", termtext.Quote(keys[0]), cairn.IdempotencyKeyRule)
	}
	return keys[0], nil
}

// noIdempotencyKey refuses an Idempotency-Key on a request that changes
// something but stores no key (what, a fork or a removal, whose retry
// once it landed is retry): taken without a word, it promised a retry
// answered as a replay, and the retry of a fork that landed was a 409,
// of a removal a 404.
func noIdempotencyKey(r *http.Request, what, retry, undone string) error {
	if len(r.Header.Values("Idempotency-Key")) > 0 {
		return badRequest("Idempotency-Key: only commits and replies take one, not %s (a retry of %s that landed is a %s, not a replay); %s", what, what, retry, undone)
	}
	return nil
}

func (s *Server) head(w http.ResponseWriter, r *http.Request) error {
	withState, err := stateParam(r)
	if err != nil {
		return err
	}
	e, err := s.session(r)
	if err != nil {
		return err
	}
	defer s.sessions.release(e)
	st, err := e.sess.Head(r.Context())
	if err != nil {
		return err
	}
	s.sessions.publish(e, st)
	return s.writeStep(w, r, st, withState, false)
}

// stepOf reads step n of e's session. A step that is not there is a 404
// that says why, in the words of the Go API's cairn.NotFoundError
// (notFoundWords): never written (the head is below it), pruned,
// removed, or below a fork's first step.
func stepOf(ctx context.Context, e *entry, n uint64) (*cairn.Step, error) {
	return e.sess.Step(ctx, n)
}

func (s *Server) step(w http.ResponseWriter, r *http.Request) error {
	withState, err := stateParam(r)
	if err != nil {
		return err
	}
	n, err := strconv.ParseUint(r.PathValue("step"), 10, 64)
	if err != nil || n == 0 {
		return badRequest("step %s: want a number >= 1%s", termtext.Quote(r.PathValue("step")), tooLarge(r.PathValue("step")))
	}
	e, err := s.session(r)
	if err != nil {
		return err
	}
	defer s.sessions.release(e)
	st, err := stepOf(r.Context(), e, n)
	if err != nil {
		return err
	}
	return s.writeStep(w, r, st, withState, false)
}

// wait answers with the head once it is past step "after": at once if it
// already is, else when a step lands (through this server, or found by
// the session's poller), or 204 when the timeout passes.
func (s *Server) wait(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	after, err := strconv.ParseUint(q.Get("after"), 10, 64)
	if err != nil {
		return badRequest("after %s: want a step number (0 for any step)%s", termtext.Quote(q.Get("after")), tooLarge(q.Get("after")))
	}
	timeout := defaultWait
	if t := q.Get("timeout"); t != "" {
		secs, err := strconv.ParseFloat(t, 64)
		if err != nil || !jsontext.Decimal(t) {
			return badRequest("timeout %s: want seconds >= 0", termtext.Quote(t))
		}
		timeout = time.Duration(min(secs, s.opts.MaxWait.Seconds()) * float64(time.Second))
	}
	timeout = min(timeout, s.opts.MaxWait)
	withState, err := stateParam(r)
	if err != nil {
		return err
	}
	e, err := s.session(r)
	if err != nil {
		return err
	}
	defer s.sessions.release(e)
	done, err := slot(s.waiters, "long-polls")
	if err != nil {
		return err
	}
	defer done()
	// The head is read whatever the timeout: a timeout bounds the wait
	// for a newer step, and timeout=0 asks whether one is there now.
	st, err := e.sess.Head(r.Context())
	switch {
	case err == nil:
		s.sessions.publish(e, st)
		if st.Number > after {
			return s.writeStep(w, r, st, withState, true)
		}
	case errors.Is(err, cairn.ErrRemoved), !errors.Is(err, cairn.ErrNotFound):
		// Removed, no step will come (a commit to the name starts a
		// new session): said, not waited on for ever. A name with no
		// steps yet is waited on: its first step may come.
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	s.sessions.addWaiter(e)
	defer s.sessions.removeWaiter(e)
	stopping := stoppingDone(r)
	for {
		news, head, removed := s.sessions.latest(e)
		if head != nil && head.Number > after {
			return s.writeStep(w, r, head, withState, true)
		}
		if removed {
			// The poller found the session removed: read it again,
			// for the answer in the reader's words.
			if _, err := e.sess.Head(r.Context()); errors.Is(err, cairn.ErrRemoved) {
				return err
			}
		}
		select {
		case <-ctx.Done():
			if r.Context().Err() != nil {
				return r.Context().Err()
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		case <-stopping:
			// The server is stopping: no newer step, as on a timeout.
			w.WriteHeader(http.StatusNoContent)
			return nil
		case <-news:
		}
	}
}

func (s *Server) log(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit := defaultLogLimit
	if l := q.Get("limit"); l != "" {
		// As the step numbers: digits only (Atoi took "+5" too).
		n, err := strconv.ParseUint(l, 10, 64)
		if err != nil || n < 1 || n > maxLogLimit {
			return badRequest("limit %s: want 1 to %d", termtext.Quote(l), maxLogLimit)
		}
		limit = int(n)
	}
	var from uint64
	if f := q.Get("from"); f != "" {
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil || n == 0 {
			return badRequest("from %s: want a step number >= 1%s", termtext.Quote(f), tooLarge(f))
		}
		from = n
	}
	e, err := s.session(r)
	if err != nil {
		return err
	}
	defer s.sessions.release(e)
	done, err := s.readSlot(w)
	if err != nil {
		return err
	}
	defer done()
	var st *cairn.Step
	if from > 0 {
		st, err = stepOf(r.Context(), e, from)
	} else {
		st, err = e.sess.Head(r.Context())
	}
	if err != nil {
		return err
	}
	sw := &streamer{w: w}
	n := 0
	errEnough := errors.New("enough")
	err = st.Log(r.Context(), func(st *cairn.Step) error {
		if n == limit {
			return errEnough
		}
		sep := ","
		if n == 0 {
			sep = `{"steps":[`
		}
		n++
		if _, err := io.WriteString(sw, sep); err != nil {
			return err
		}
		return encode(sw, info(st))
	})
	if errors.Is(err, errEnough) {
		err = nil
	}
	if err == nil {
		if n == 0 {
			_, err = io.WriteString(sw, `{"steps":[`)
		}
		if err == nil {
			_, err = io.WriteString(sw, "]}\n")
		}
	}
	return sw.finish(err)
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
	done, err := s.readSlot(w)
	if err != nil {
		return err
	}
	defer done()
	prefix := r.URL.Query().Get("prefix")
	if prefix != "" && cairn.ValidSession(prefix) != nil {
		// Any start of a session name is itself a session name.
		return badRequest("prefix: %s is not the start of a session name: want %s", termtext.Quote(prefix), cairn.SessionNameRule)
	}
	sw := &streamer{w: w}
	if _, err := io.WriteString(sw, `{"sessions":[`); err != nil {
		return sw.finish(err)
	}
	n := 0
	err = s.ws.EachHead(r.Context(), prefix, func(head *cairn.Step) error {
		if n > 0 {
			if _, err := io.WriteString(sw, ","); err != nil {
				return err
			}
		}
		n++
		return encode(sw, sessionInfo{head.Session, head.Number, head.ID.String(), head.Status.String(), head.Time.Format(time.RFC3339Nano)})
	})
	damaged, err := unreadable(err)
	if err != nil {
		return sw.finish(err)
	}
	if _, err := io.WriteString(sw, "]"); err != nil {
		return sw.finish(err)
	}
	if damaged != nil {
		if _, err := io.WriteString(sw, `,"unreadable":`); err != nil {
			return sw.finish(err)
		}
		if err := encode(sw, damaged); err != nil {
			return sw.finish(err)
		}
	}
	_, err = io.WriteString(sw, "}\n")
	return sw.finish(err)
}

// unreadableSession is one session a listing passed over because the
// store is damaged there.
type unreadableSession struct {
	Session string `json:"session"`
	Error   string `json:"error"`
}

// unreadable splits a walk's error: the sessions it passed over as
// damaged (cairn.UnreadableError), listed beside what was read with a
// 200, and any other error, which fails the request.
func unreadable(err error) ([]unreadableSession, error) {
	var u *cairn.UnreadableError
	if !errors.As(err, &u) {
		return nil, err
	}
	out := make([]unreadableSession, len(u.Sessions))
	for i, name := range u.Sessions {
		out[i] = unreadableSession{name, u.Errs[i].Error()}
	}
	return out, nil
}

func (s *Server) inbox(w http.ResponseWriter, r *http.Request) error {
	done, err := s.readSlot(w)
	if err != nil {
		return err
	}
	defer done()
	p, err := hitl.Inbox(r.Context(), s.ws)
	damaged, err := unreadable(err)
	if err != nil {
		return err
	}
	body := map[string]any{"pending": p}
	if damaged != nil {
		body["unreadable"] = damaged
	}
	writeJSON(w, http.StatusOK, body)
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
		name, n, err := cairn.ParseRef(ref)
		if err != nil {
			// A bad name as every route says one; a bad number as
			// ParseRef does.
			if bare, _, _ := strings.Cut(ref, "@"); cairn.ValidSession(bare) != nil {
				err = badSession(bare)
			}
			return badRequest("%s: %v", k, err)
		}
		e, err := s.sessions.acquire(name)
		if err != nil {
			return badRequest("%s: %v", k, err)
		}
		defer s.sessions.release(e)
		if n > 0 {
			steps[i], err = stepOf(r.Context(), e, n)
		} else {
			steps[i], err = e.sess.Head(r.Context())
		}
		if err != nil {
			return err
		}
	}
	if ka, kb := steps[0].Kind.String(), steps[1].Kind.String(); ka != kb {
		return badRequest("a (%s) holds a %s state and b (%s) a %s state: diff compares two JSON states or two directory states",
			steps[0], kindName(ka), steps[1], kindName(kb))
	}
	done, err := s.readSlot(w)
	if err != nil {
		return err
	}
	defer done()
	changes, err := s.ws.Diff(r.Context(), steps[0], steps[1])
	if err != nil {
		return err
	}
	out := make([]Change, 0, len(changes))
	for _, c := range changes {
		out = append(out, Change{c.Path, jsontext.NameBytes(c.Path), c.Kind})
	}
	writeJSON(w, http.StatusOK, map[string]any{"a": steps[0].String(), "b": steps[1].String(), "changes": out})
	return nil
}

func kindName(k string) string {
	if k == "dir" {
		return "directory"
	}
	return "JSON"
}

// forkRequest is the body of POST /v1/sessions/{session}/fork.
type forkRequest struct {
	Step *uint64 `json:"step,omitempty"` // default: the head
	To   string  `json:"to"`
}

var forkFields = []field{
	{"to", "the new session's name, a string"},
	{"step", "a step number >= 1"},
}

func (s *Server) fork(w http.ResponseWriter, r *http.Request) error {
	if err := noIdempotencyKey(r, "a fork", "409: the session exists", "nothing was forked"); err != nil {
		return err
	}
	e, err := s.session(r)
	if err != nil {
		return err
	}
	defer s.sessions.release(e)
	var req forkRequest
	if err := decode(r, &req, forkFields...); err != nil {
		return err
	}
	to, err := s.sessions.acquire(req.To)
	if err != nil {
		return badRequest("to: %v", err)
	}
	defer s.sessions.release(to)
	var from *cairn.Step
	if req.Step != nil {
		if *req.Step == 0 {
			return badRequest("step: want a step number >= 1, not 0")
		}
		from, err = stepOf(r.Context(), e, *req.Step)
	} else {
		from, err = e.sess.Head(r.Context())
	}
	if err != nil {
		return err
	}
	st, err := s.ws.Fork(r.Context(), from, req.To)
	if err != nil {
		return &callError{call: fmt.Sprintf("fork %s to %s", from, req.To), err: err}
	}
	s.sessions.publish(to, st)
	writeJSON(w, http.StatusCreated, info(st))
	return nil
}

// replyRequest is the body of POST /v1/sessions/{session}/reply.
type replyRequest struct {
	Input json.RawMessage `json:"input"`
	// Expect, if set, is the step of the question the human answers: the
	// reply is a conflict if the head is another.
	Expect *uint64 `json:"expect,omitempty"`
}

var replyFields = []field{
	{"input", "the human's answer, any JSON value"},
	{"expect", "a step number >= 1 (the step of the question answered)"},
}

func (s *Server) reply(w http.ResponseWriter, r *http.Request) error {
	e, err := s.session(r)
	if err != nil {
		return err
	}
	defer s.sessions.release(e)
	var req replyRequest
	if err := decode(r, &req, replyFields...); err != nil {
		return err
	}
	if err := checkText("input", req.Input); err != nil {
		return err
	}
	if len(req.Input) == 0 {
		return badRequest("input is required: the human's answer, any JSON value")
	}
	if len(req.Input) > hitl.MaxInput {
		return &apiError{status: http.StatusRequestEntityTooLarge, code: "too_large", msg: fmt.Sprintf("input exceeds %d bytes", hitl.MaxInput)}
	}
	if req.Expect != nil && *req.Expect == 0 {
		return badRequest("expect: want a step number >= 1 (the step of the question answered)")
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	st, err := hitl.ReplyWith(r.Context(), e.sess, req.Input, hitl.ReplyOptions{Question: req.Expect, IdempotencyKey: key})
	if err != nil {
		return &callError{call: "reply to " + e.sess.Name(), err: err}
	}
	if st.Replayed {
		w.Header().Set(replayedHeader, "true")
	}
	s.sessions.publish(e, st)
	writeJSON(w, http.StatusCreated, info(st))
	return nil
}

// removed is the answer to DELETE /v1/sessions/{session}.
type removed struct {
	Session string `json:"session"`
	Head    uint64 `json:"head"`
	Steps   uint64 `json:"steps"`
}

// remove drops a session from the workspace (as `cairn rm`).
func (s *Server) remove(w http.ResponseWriter, r *http.Request) error {
	// A body is no part of this request: one that meant to narrow it
	// (an expected head, say) must not remove the session regardless.
	if err := noIdempotencyKey(r, "a removal", "404: no such session", "nothing was removed"); err != nil {
		return err
	}
	if n, err := r.Body.Read(make([]byte, 1)); n > 0 {
		return badRequest("request body: DELETE %s takes none; nothing was removed", r.URL.Path)
	} else if err != nil && !errors.Is(err, io.EOF) {
		return readError(err)
	}
	e, err := s.session(r)
	if err != nil {
		return err
	}
	defer s.sessions.release(e)
	res, err := s.ws.Remove(r.Context(), e.sess.Name())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, removed{res.Session, res.Head, res.Steps})
	return nil
}
