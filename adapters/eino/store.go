// Package eino stores CloudWeGo Eino checkpoints in cairn.
//
// A *Store is an Eino compose.CheckPointStore (and adk.CheckPointDeleter).
// Every checkpoint id is a cairn session; every Set is a new step of that
// session, so each interrupt a graph ever saved is kept, can be inspected with
// `cairn log`, and can be forked into a new checkpoint id to resume the run
// differently. Get reads the session's head, from the store, so a fresh
// process on another machine resumes where the last one stopped.
//
//	ws, _ := cairn.Open(ctx, "s3://bucket/agents") // with import _ "github.com/cairnlog/cairn/cas/s3"
//	store := eino.New(ws)
//	graph, _ := g.Compile(ctx, compose.WithCheckPointStore(store))
//	_, err := graph.Invoke(ctx, in, compose.WithCheckPointID("run-42"))
//
// Checkpoints that are compact JSON (what Eino's default serializer writes)
// are stored structurally, so a checkpoint that differs from the previous one
// in a few fields costs only those fields; other bytes are stored base64
// encoded. Either way Get returns exactly the bytes Set was given.
package eino

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/cairnlog/cairn"
	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/compose"
)

// DefaultPrefix starts the session name of every checkpoint id unless
// Options.Prefix says otherwise.
const DefaultPrefix = "eino-"

// maxName is the longest cairn session name.
const maxName = 128

// Options configure a Store.
type Options struct {
	// Prefix starts every session name the store uses (default
	// DefaultPrefix), so that Eino checkpoints can share a workspace with
	// other sessions. It must be 1-32 of [A-Za-z0-9.-], not starting with
	// '.'; '_' is reserved for escapes.
	Prefix string
}

// Store keeps Eino checkpoints in a cairn workspace. It is safe for
// concurrent use.
type Store struct {
	ws     *cairn.Workspace
	prefix string
}

// Compile-time checks: Store is what Eino's graphs and runners expect.
var (
	_ compose.CheckPointStore = (*Store)(nil)
	_ adk.CheckPointDeleter   = (*Store)(nil)
)

// New returns a Store over ws with default options.
func New(ws *cairn.Workspace) *Store {
	s, _ := NewWithOptions(ws, Options{})
	return s
}

// NewWithOptions returns a Store over ws, or an error if opts are invalid.
func NewWithOptions(ws *cairn.Workspace, opts Options) (*Store, error) {
	p := opts.Prefix
	if p == "" {
		p = DefaultPrefix
	}
	if len(p) > 32 || p[0] == '.' || strings.IndexFunc(p, func(r rune) bool { return !plain(r) }) >= 0 {
		return nil, fmt.Errorf("eino store: invalid prefix %q (want 1-32 of [A-Za-z0-9.-], not starting with '.')", p)
	}
	return &Store{ws: ws, prefix: p}, nil
}

// envelope is the JSON document each step stores.
type envelope struct {
	Version    int             `json:"eino_checkpoint"`
	ID         string          `json:"id"`
	Deleted    bool            `json:"deleted,omitempty"`
	Base64     *string         `json:"base64,omitempty"`
	Checkpoint json.RawMessage `json:"json,omitempty"`
}

const envelopeVersion = 1

// SessionName returns the cairn session that holds checkpoint id. An id made
// of [A-Za-z0-9.-] is kept as it is after the prefix; any other byte
// (including '_') is escaped as _XX (hex), so distinct ids never share a
// name. An id whose escaped form would not fit cairn's 128-byte limit is
// named by its SHA-256 instead ("_h" and 64 hex digits). Every read checks
// the id the step records, so stores whose prefixes overlap ("e" and "ex-")
// get an error, never each other's checkpoints.
//
// The session of a checkpoint is where `cairn log` and `cairn fork` find it.
func (s *Store) SessionName(id string) string {
	var b strings.Builder
	b.WriteString(s.prefix)
	for i := 0; i < len(id); i++ {
		c := id[i]
		if plain(rune(c)) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "_%02x", c)
		}
	}
	if b.Len() <= maxName {
		return b.String()
	}
	return s.prefix + "_h" + hashHex(id)
}

func plain(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-'
}

// hashed reports whether id's session is named by the id's hash.
func (s *Store) hashed(id string) bool {
	return strings.HasPrefix(s.SessionName(id), s.prefix+"_h")
}

// session returns the cairn session of checkpoint id.
func (s *Store) session(id string) (*cairn.Session, error) {
	if id == "" {
		return nil, errors.New("eino store: empty checkpoint id")
	}
	sess, err := s.ws.Session(s.SessionName(id))
	if err != nil {
		return nil, s.failed(err, []string{id}, "checkpoint %q", id)
	}
	return sess, nil
}

// Get returns the newest checkpoint saved under id; ok is false if there is
// none (never saved, or deleted).
func (s *Store) Get(ctx context.Context, id string) (data []byte, ok bool, err error) {
	sess, err := s.session(id)
	if err != nil {
		return nil, false, err
	}
	head, err := sess.Head(ctx)
	if errors.Is(err, cairn.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.failed(err, []string{id}, "get checkpoint %q", id)
	}
	return s.decode(ctx, head, id)
}

// GetStep returns the checkpoint that step n of id's session holds (steps
// are numbered from 1, one per Set). ok is false for a deletion step.
func (s *Store) GetStep(ctx context.Context, id string, n uint64) (data []byte, ok bool, err error) {
	sess, err := s.session(id)
	if err != nil {
		return nil, false, err
	}
	st, err := sess.Step(ctx, n)
	if err != nil {
		return nil, false, s.failed(err, []string{id}, "get checkpoint %q step %d", id, n)
	}
	return s.decode(ctx, st, id)
}

func (s *Store) decode(ctx context.Context, st *cairn.Step, id string) ([]byte, bool, error) {
	doc, err := st.JSON(ctx)
	if err != nil {
		return nil, false, s.failed(err, []string{id}, "read checkpoint %q step %d", id, st.Number)
	}
	// The id the step records is checked, so that a session another
	// store (with an overlapping prefix) or a hash collision shares is
	// refused rather than read as this id's; but a step that Fork copied
	// (its first, or one of the origin's before it) records the id it was
	// forked from.
	check := st.Session == s.SessionName(id) && st.Origin == nil
	data, ok, err := decodeEnvelope(doc, id, check)
	if err != nil {
		return nil, false, fmt.Errorf("eino store: checkpoint %q step %d: %w", id, st.Number, err)
	}
	return data, ok, nil
}

// decodeEnvelope returns the checkpoint a stored envelope holds (ok false
// for a deletion). If checkID, the envelope must name id.
func decodeEnvelope(doc []byte, id string, checkID bool) (data []byte, ok bool, err error) {
	var env envelope
	if err := json.Unmarshal(doc, &env); err != nil {
		return nil, false, fmt.Errorf("not a checkpoint envelope: %w", err)
	}
	if env.Version != envelopeVersion {
		return nil, false, fmt.Errorf("envelope version %d, want %d", env.Version, envelopeVersion)
	}
	if checkID && env.ID != recorded(id) {
		return nil, false, fmt.Errorf("its cairn session holds checkpoint %q, not %q (another store's, whose prefix overlaps)", env.ID, id)
	}
	switch {
	case env.Deleted:
		return nil, false, nil
	case env.Base64 != nil:
		data, err := base64.StdEncoding.DecodeString(*env.Base64)
		if err != nil {
			return nil, false, fmt.Errorf("bad base64: %w", err)
		}
		return data, true, nil
	case env.Checkpoint != nil:
		return []byte(env.Checkpoint), true, nil
	}
	return nil, false, errors.New("envelope holds no checkpoint")
}

// Set saves data as the newest checkpoint of id: the next step of id's
// session.
func (s *Store) Set(ctx context.Context, id string, data []byte) error {
	sess, err := s.session(id)
	if err != nil {
		return err
	}
	if err := s.commit(ctx, sess, checkpointEnvelope(id, data), cairn.AwaitingInput, len(data)); err != nil {
		return s.failed(err, []string{id}, "set checkpoint %q", id)
	}
	return nil
}

// checkpointEnvelope is the envelope of checkpoint data saved under id.
func checkpointEnvelope(id string, data []byte) envelope {
	env := envelope{Version: envelopeVersion, ID: id}
	if isCompactJSON(data) {
		env.Checkpoint = data
	} else {
		b := base64.StdEncoding.EncodeToString(data)
		env.Base64 = &b
	}
	return env
}

// Delete marks checkpoint id deleted: a step that Get reads as "no
// checkpoint". Earlier steps stay in the log (and can still be forked) until
// cairn's retention removes them. Deleting an id that was never saved, or
// is deleted already, does nothing.
func (s *Store) Delete(ctx context.Context, id string) error {
	sess, err := s.session(id)
	if err != nil {
		return err
	}
	head, err := sess.Head(ctx)
	if errors.Is(err, cairn.ErrNotFound) {
		return nil
	}
	if err != nil {
		return s.failed(err, []string{id}, "delete checkpoint %q", id)
	}
	if head.Session == sess.Name() && bytes.Equal(head.Record, deleteRecord) {
		return nil // deleted already
	}
	if err := s.commit(ctx, sess, envelope{Version: envelopeVersion, ID: id, Deleted: true}, cairn.Done, -1); err != nil {
		return s.failed(err, []string{id}, "delete checkpoint %q", id)
	}
	return nil
}

// deleteRecord is the record of a deletion step.
var deleteRecord = []byte(`{"eino":"delete"}`)

// commit writes env as the next step of sess, its checkpoint's session.
// Its record says what happened, for `cairn log`:
// {"eino":"set","bytes":N} or {"eino":"delete"} (size < 0).
func (s *Store) commit(ctx context.Context, sess *cairn.Session, env envelope, status cairn.Status, size int) error {
	doc, err := marshalEnvelope(env)
	if err != nil {
		return err
	}
	rec := setRecord(size)
	// Each checkpoint replaces the one before, so a new one withdraws the
	// pause the previous checkpoint (an interrupt) left pending. A
	// withdrawal is refused on a head that asks nothing (the session's
	// first checkpoint, one after a delete or a reply): then the commit is
	// made again without it, which costs one head read more, off the
	// common path.
	//
	// Another writer (another process saving the same checkpoint id) may
	// take the step first: nothing was written, and as a checkpoint
	// replaces the one before whatever it was, the commit is made again on
	// the new head, so the last writer wins, as with any key-value store.
	opts := cairn.CommitOptions{Status: status, Record: rec, Withdraw: true}
	for conflicts := 0; ; {
		_, err = sess.Commit(ctx, cairn.JSON(doc), opts)
		switch {
		case errors.Is(err, cairn.ErrNotAwaiting) && opts.Withdraw:
			opts.Withdraw = false
		case errors.Is(err, cairn.ErrConflict) && conflicts < maxConflicts:
			conflicts++
			opts.Withdraw = true
		default:
			return err
		}
	}
}

// setRecord is the record of a step that saves a checkpoint of size bytes,
// or of a deletion if size < 0.
func setRecord(size int) []byte {
	if size < 0 {
		return deleteRecord
	}
	return fmt.Appendf(nil, `{"eino":"set","bytes":%d}`, size)
}

// maxConflicts bounds how often a commit is made again after another
// writer took its step.
const maxConflicts = 16

// Fork copies step n of checkpoint id into a new checkpoint id to (which must
// not hold a checkpoint): zero bytes copied, one small manifest written.
// Resuming the graph with compose.WithCheckPointID(to) then continues from
// that checkpoint on its own branch, leaving id untouched.
//
// An id that was deleted holds no checkpoint, so it is free, as one never
// saved is. Its cairn session still exists (Delete keeps the history), and
// cairn forks only to a session name not in use: the forked checkpoint is
// then saved as the next step of to's session instead, as Set would save
// it (its JSON is shared with id's step, not stored again), so `cairn log`
// of to shows to's own history, not id's.
func (s *Store) Fork(ctx context.Context, id string, n uint64, to string) error {
	from, err := s.session(id)
	if err != nil {
		return err
	}
	if _, err := s.session(to); err != nil {
		return err
	}
	st, err := from.Step(ctx, n)
	if err != nil {
		return s.failed(err, []string{id}, "fork checkpoint %q step %d", id, n)
	}
	data, ok, err := s.decode(ctx, st, id)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("eino store: fork checkpoint %q step %d: it is a deletion", id, n)
	}
	if _, err := s.ws.Fork(ctx, st, s.SessionName(to)); err != nil {
		if errors.Is(err, cairn.ErrConflict) {
			return s.forkOnto(ctx, id, n, to, data, err)
		}
		return s.failed(err, []string{id, to}, "fork checkpoint %q step %d to %q", id, n, to)
	}
	if s.hashed(to) {
		// A hashed name is checked against the id its head records, and the
		// forked head still records id: one more step records to (same
		// checkpoint, so it costs a manifest and the changed id only).
		return s.Set(ctx, to, data)
	}
	return nil
}

// forkOnto saves data, step n of checkpoint id, as checkpoint to, whose
// session already exists (forkErr says so): if to holds no checkpoint (it
// was deleted, or its session removed), as the next step of its session,
// fenced on the head it read, so that a checkpoint saved to to meanwhile
// is never replaced; if it holds one, the fork is refused.
func (s *Store) forkOnto(ctx context.Context, id string, n uint64, to string, data []byte, forkErr error) error {
	what := fmt.Sprintf("eino store: fork checkpoint %q step %d to %q", id, n, to)
	exists := func(err error) error {
		return &userError{msg: fmt.Sprintf("%s: checkpoint %q already exists: fork to a new checkpoint id, or delete %q first", what, to, to), err: err}
	}
	sess, err := s.session(to)
	if err != nil {
		return err
	}
	var expect uint64
	head, err := sess.Head(ctx)
	switch {
	case errors.Is(err, cairn.ErrNotFound):
		// Removed (cairn rm): the name starts again, after no head.
		var ce *cairn.ConflictError
		if errors.As(forkErr, &ce) {
			expect = ce.Head
		}
	case err != nil:
		return s.failed(err, []string{to}, "fork checkpoint %q step %d to %q", id, n, to)
	case head.Session == sess.Name() && bytes.Equal(head.Record, deleteRecord):
		expect = head.Number
	default:
		return exists(forkErr)
	}
	doc, err := marshalEnvelope(checkpointEnvelope(to, data))
	if err != nil {
		return err
	}
	_, err = sess.Commit(ctx, cairn.JSON(doc), cairn.CommitOptions{Status: cairn.AwaitingInput, Record: setRecord(len(data)), Expect: cairn.ExpectHead(expect)})
	switch {
	case errors.Is(err, cairn.ErrConflict):
		return exists(err) // saved meanwhile
	case err != nil:
		return s.failed(err, []string{to}, "fork checkpoint %q step %d to %q", id, n, to)
	}
	return nil
}

// failed returns err, an error of cairn's, as the store's error of the
// call that format and args describe ("get checkpoint %q step %d"), in
// the words of checkpoint ids: every cairn session name of ids, and every
// step reference SESSION@N of a session the store names, becomes the
// checkpoint id (and step number) the user knows, and cairn's words for a
// session's head the checkpoint's. It still matches err with errors.Is and
// errors.As. A limit error says how to raise the limit (hinted).
func (s *Store) failed(err error, ids []string, format string, args ...any) error {
	what := "eino store: " + fmt.Sprintf(format, args...)
	var msg string
	if nf := (*cairn.NotFoundError)(nil); errors.As(err, &nf) && nf != nil {
		// Said by what it is, not by its words: those say "steps". What
		// cairn says before it ("fork s@3 to t: ") is the call, which
		// what says already.
		msg = notFound(nf)
	} else {
		msg = hinted(err).Error()
	}
	inner := s.speak(msg, ids)
	// The call already names what cairn's error begins with: say it once.
	if i := strings.Index(inner, ": "); i > 0 && strings.HasPrefix(inner, "checkpoint ") && strings.Contains(what, inner[:i]) {
		inner = inner[i+2:]
	}
	return &userError{msg: what + ": " + inner, err: err}
}

// sessionRef matches a cairn session name, with a step number after '@' if
// it has one, and the word before it that cairn puts there.
var sessionRef = regexp.MustCompile(`((?:step|session|head of|commit) )?([A-Za-z0-9._-]+)(?:@([0-9]+))?`)

// cairnWords are cairn's phrases about sessions, and what they mean for a
// checkpoint id.
var cairnWords = strings.NewReplacer(
	"the session's head is step ", "its newest step is ",
	"its head is step ", "its newest step is ",
	"the session was removed", "its cairn session was removed",
	"fork to a new name", "fork to a new checkpoint id",
)

// notFound says nf, a cairn session or step that is not there, in the
// words of a checkpoint, for speak to name the checkpoint: "step S@N:
// not found: nothing was saved under it".
func notFound(nf *cairn.NotFoundError) string {
	var why string
	switch nf.Why {
	case cairn.NotFoundNoSteps:
		why = "nothing was saved under it"
	case cairn.NotFoundRemoved:
		why = "its cairn session was removed"
		if nf.Step > 0 && nf.InForks {
			why += fmt.Sprintf("; if a session was forked from %s above step %d, its history still holds this step, as its step %d (cairn log FORK lists it)", nf.Session, nf.Step, nf.Step)
		}
		if nf.Step > 0 && nf.Start > 0 {
			why += fmt.Sprintf("; %s was committed to again since, and its history starts at step %d", nf.Session, nf.Start)
		}
	case cairn.NotFoundPastHead:
		why = fmt.Sprintf("its newest step is %d", nf.Head)
	case cairn.NotFoundPruned:
		why = fmt.Sprintf("pruned (its history starts at step %d)", nf.Start)
	case cairn.NotFoundBeforeStart:
		why = fmt.Sprintf("its history starts at step %d", nf.Start)
	case cairn.NotFoundLost:
		why = "the store has lost it (cairn verify lists what is missing)"
		if nf.Below > 0 {
			why = fmt.Sprintf("the store has lost a step of its history below its step %d (cairn verify lists what is missing)", nf.Below)
		}
	default:
		return nf.Error()
	}
	if nf.Step == 0 {
		return fmt.Sprintf("session %s: not found: %s", nf.Session, why)
	}
	return fmt.Sprintf("step %s@%d: not found: %s", nf.Session, nf.Step, why)
}

// speak rewrites msg, the text of a cairn error, in the words of
// checkpoint ids (see failed).
func (s *Store) speak(msg string, ids []string) string {
	msg = sessionRef.ReplaceAllStringFunc(msg, func(m string) string {
		sub := sessionRef.FindStringSubmatch(m)
		name, step := sub[2], sub[3]
		id, ok := "", false
		for _, x := range ids {
			if x != "" && s.SessionName(x) == name {
				id, ok = x, true
				break
			}
		}
		if !ok && step != "" {
			// A step of another checkpoint's session: one a fork's history reaches.
			id, ok = s.checkpointOf(name)
		}
		if !ok {
			return m
		}
		verb := ""
		if sub[1] == "commit " {
			verb = sub[1]
		}
		if step != "" {
			return fmt.Sprintf("%scheckpoint %q step %s", verb, id, step)
		}
		return fmt.Sprintf("%scheckpoint %q", verb, id)
	})
	return cairnWords.Replace(msg)
}

// checkpointOf returns the checkpoint id whose session is name, if the
// store names a session so (not by a hash, which cannot be undone).
func (s *Store) checkpointOf(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, s.prefix)
	if !ok || strings.HasPrefix(rest, "_h") {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(rest); i++ {
		if rest[i] != '_' {
			b.WriteByte(rest[i])
			continue
		}
		if i+2 >= len(rest) {
			return "", false
		}
		c, err := hex.DecodeString(rest[i+1 : i+3])
		if err != nil {
			return "", false
		}
		b.Write(c)
		i += 2
	}
	id := b.String()
	return id, id != "" && s.SessionName(id) == name
}

// userError says what went wrong in an Eino user's words and still
// matches, with errors.Is and errors.As, the error it stands for.
type userError struct {
	msg string
	err error
}

func (e *userError) Error() string { return e.msg }
func (e *userError) Unwrap() error { return e.err }

// Steps returns the cairn steps of checkpoint id, newest first, following a
// fork back into the checkpoint it was forked from.
func (s *Store) Steps(ctx context.Context, id string) ([]*cairn.Step, error) {
	sess, err := s.session(id)
	if err != nil {
		return nil, err
	}
	var steps []*cairn.Step
	err = sess.Log(ctx, func(st *cairn.Step) error {
		steps = append(steps, st)
		return nil
	})
	if err != nil {
		return nil, s.failed(err, []string{id}, "log checkpoint %q", id)
	}
	return steps, nil
}

// marshalEnvelope encodes env without json.Marshal's HTML escaping: a
// structural checkpoint is embedded as it is, so that '<', '>', '&', U+2028
// and U+2029 in its strings read back as the bytes Set was given, not as
// \u escapes.
func marshalEnvelope(env envelope) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(env); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// isCompactJSON reports whether data is valid JSON without insignificant
// whitespace, so that cairn's structural JSON returns it byte for byte. It
// must be UTF-8 too: json.Valid accepts invalid UTF-8 in strings, which
// cairn refuses to store as JSON; and nested, inside the envelope, no
// deeper than cairn stores JSON.
func isCompactJSON(data []byte) bool {
	if !utf8.Valid(data) || !json.Valid(data) || depth(data)+1 > cairn.MaxJSONDepth {
		return false
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		return false
	}
	return bytes.Equal(buf.Bytes(), data)
}

// depth returns how deeply valid JSON data nests arrays and objects.
func depth(data []byte) int {
	d, most, inString := 0, 0, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			d++
			most = max(most, d)
		case c == ']' || c == '}':
			d--
		}
	}
	return most
}

// recorded returns id as an envelope records it: JSON holds only UTF-8, so
// encoding/json stores each byte of id that is not UTF-8 as U+FFFD.
func recorded(id string) string {
	if utf8.ValidString(id) {
		return id
	}
	b, _ := json.Marshal(id)
	var r string
	_ = json.Unmarshal(b, &r)
	return r
}

// hinted adds to a limit error (cairn.ErrLimit) what the limit is and how
// to raise it; other errors are returned as they are.
func hinted(err error) error {
	if h := cairn.LimitHint(err); h != "" {
		return fmt.Errorf("%w (%s)", err, h)
	}
	return err
}

func hashHex(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}
