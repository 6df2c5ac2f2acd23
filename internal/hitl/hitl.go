// Package hitl pauses agent sessions for a human and writes the human's
// answer back as a step.
//
// The convention: an agent that needs a human commits a step with status
// awaiting_input and a record holding a "question" (any JSON value). No
// process waits: the session simply rests at that step. A reply is the
// next step, with the question step's state unchanged, status running and
// the record {"reply": INPUT, "in_reply_to": N}. The agent, restarted by
// `cairn run` or woken by the HTTP long-poll, finds the reply in its head.
package hitl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/jsontext"
)

// ErrNotAwaiting is returned by Reply when the session's head does not
// await input (nobody asked, or someone already replied). It wraps
// cairn.ErrConflict.
var ErrNotAwaiting = fmt.Errorf("%w: the head does not await input", cairn.ErrConflict)

// ErrQuestionMoved is returned by ReplyTo when the session's head is not
// the question the reply names. It wraps cairn.ErrConflict.
var ErrQuestionMoved = fmt.Errorf("%w: the question moved", cairn.ErrConflict)

// MaxInput bounds a reply's JSON text; it travels in a step record.
const MaxInput = 512 << 10

// MaxInputDepth bounds a reply's nesting: it is stored one level down in
// its step's record, which may nest no deeper than a state.
const MaxInputDepth = cairn.MaxJSONDepth - 1

// inputError is a reply's input that cannot be stored, in its own words;
// it matches cairn.ErrInvalid.
type inputError struct{ msg string }

func (e *inputError) Error() string        { return e.msg }
func (e *inputError) Is(target error) bool { return target == cairn.ErrInvalid }

// Pending is a session whose head awaits a human.
type Pending struct {
	Session  string          `json:"session"`
	Step     uint64          `json:"step"`
	ID       string          `json:"id"`
	Time     time.Time       `json:"time"`
	Question json.RawMessage `json:"question"` // the record's "question", or null
	Record   json.RawMessage `json:"record"`   // the whole step record, or null
}

// Question returns the "question" member of a step record, or nil.
func Question(record json.RawMessage) json.RawMessage {
	var r struct {
		Question json.RawMessage `json:"question"`
	}
	if len(record) == 0 || json.Unmarshal(record, &r) != nil {
		return nil
	}
	return r.Question
}

// ReplyInput returns the "reply" member of a reply step's record and
// true, or nil and false if the record is no reply.
func ReplyInput(record json.RawMessage) (json.RawMessage, bool) {
	input, _, ok := ReplyOf(record)
	return input, ok
}

// ReplyOf returns the "reply" and "in_reply_to" members of a reply
// step's record (the answer, and the step of the question it answers)
// and true, or false if the record is no reply.
func ReplyOf(record json.RawMessage) (input json.RawMessage, question uint64, ok bool) {
	var r struct {
		Reply     json.RawMessage `json:"reply"`
		InReplyTo *uint64         `json:"in_reply_to"`
	}
	if len(record) == 0 || json.Unmarshal(record, &r) != nil || r.InReplyTo == nil || r.Reply == nil {
		return nil, 0, false
	}
	return r.Reply, *r.InReplyTo, true
}

// Ask commits the head's state unchanged as the next step of s, with
// status awaiting_input and the record {"question": question, "details":
// details}. details may be nil. Asking while a question is pending fails
// with cairn.ErrAwaitingInput (a cairn.ErrConflict).
func Ask(ctx context.Context, s *cairn.Session, question string, details json.RawMessage) (*cairn.Step, error) {
	return AskWith(ctx, s, question, details, AskOptions{})
}

// AskOptions name a question (AskWith).
type AskOptions struct {
	// IdempotencyKey, if set, names this question so that retrying it
	// lands one question, however often its answer was lost, as
	// cairn.CommitOptions.IdempotencyKey names a commit. A retry whose
	// question already landed returns that step with Step.Replayed set
	// and writes nothing: whether the question still waits (the head
	// holds the key) or a human has answered it since (the head is the
	// reply to a question holding the key; Answer reads that reply). The
	// same key with another question or details, or on a step that is no
	// question, is cairn.ErrKeyUsed. Without a key, asking again while
	// the question is pending fails with cairn.ErrAwaitingInput, and
	// asking once it was answered asks a new question, as before.
	IdempotencyKey string
}

// AskWith is Ask with options. A question with a key costs what one
// without costs; only a retry that meets its earlier try reads more (the
// step that try asked on), and so does a question asked right after a
// reply (the question replied to, to tell whether it holds the key).
func AskWith(ctx context.Context, s *cairn.Session, question string, details json.RawMessage, opts AskOptions) (*cairn.Step, error) {
	if opts.IdempotencyKey != "" {
		if err := cairn.ValidIdempotencyKey(opts.IdempotencyKey); err != nil {
			return nil, fmt.Errorf("ask in %s: %w", s.Name(), err)
		}
	}
	head, err := s.Head(ctx)
	if err != nil {
		return nil, fmt.Errorf("ask in %s: %w", s.Name(), err)
	}
	rec := struct {
		Question string          `json:"question"`
		Details  json.RawMessage `json:"details,omitempty"`
	}{question, details}
	if len(details) > 0 && !json.Valid(details) {
		return nil, fmt.Errorf("ask in %s: details are not valid JSON", s.Name())
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("ask in %s: %w", s.Name(), err)
	}
	// asked is the step the question is asked on: the head, or, for a
	// retry, the step its earlier try asked on. The commit then meets
	// that try's slot (the head's, or, once a human has replied, the one
	// below the head: the commit's Expect finds it there) and compares
	// itself with it: the same question is answered with that step, any
	// other is a conflict.
	asked := head
	try, err := earlierAsk(ctx, s, head, opts.IdempotencyKey)
	if err != nil {
		return nil, fmt.Errorf("ask in %s: %w", s.Name(), err)
	}
	if try != nil {
		if asked, err = try.ParentStep(ctx); err != nil {
			return nil, fmt.Errorf("ask in %s: %w", s.Name(), err)
		}
	}
	return s.Commit(ctx, cairn.StateOf(asked), cairn.CommitOptions{
		Record: b, Status: cairn.AwaitingInput, Expect: cairn.ExpectHead(asked.Number),
		IdempotencyKey: opts.IdempotencyKey,
	})
}

// earlierAsk finds, for a question with key, a step that may be an
// earlier try of it whose answer was lost: the head, if it holds the key
// (the question still waits), or the question the head replies to, if
// that one holds the key (a human answered it since). It returns nil if
// there is none, or if the step has no parent in s (a session's first
// step is no question asked on a step: the commit finds the key on a
// step that is no such question). It reads only when the head is a
// reply to the step below it: that step.
func earlierAsk(ctx context.Context, s *cairn.Session, head *cairn.Step, key string) (*cairn.Step, error) {
	if key == "" || head.Parent == nil || head.Session != s.Name() || head.Parent.Session != s.Name() {
		return nil, nil
	}
	try := head
	if head.IdempotencyKey != key {
		if _, q, ok := ReplyOf(head.Record); !ok || q != head.Parent.Number {
			return nil, nil
		}
		q, err := head.ParentStep(ctx)
		if err != nil {
			return nil, err
		}
		if q.IdempotencyKey != key || q.Status != cairn.AwaitingInput {
			return nil, nil
		}
		try = q
	}
	if try.Parent == nil || try.Parent.Session != s.Name() {
		return nil, nil
	}
	return try, nil
}

// Answer returns the step that answered the question q (a step awaiting
// input, as AskWith returns it): the reply right after it, or nil if the
// question still waits, or was withdrawn or went unanswered (the step
// after it is no reply to it). It reads that step.
func Answer(ctx context.Context, s *cairn.Session, q *cairn.Step) (*cairn.Step, error) {
	if q.Status != cairn.AwaitingInput || q.Session != s.Name() {
		return nil, nil
	}
	st, err := s.Step(ctx, q.Number+1)
	if errors.Is(err, cairn.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reply to %s: %w", q, err)
	}
	if _, n, ok := ReplyOf(st.Record); !ok || n != q.Number || st.Parent == nil || st.Parent.ID != q.ID.String() {
		return nil, nil
	}
	return st, nil
}

// Reply writes input (a JSON value) as the answer to the question at the
// head of s: the next step, with the head's state, status running and the
// record {"reply": input, "in_reply_to": N}. It fails with ErrNotAwaiting
// if the head does not await input, and with cairn.ErrConflict if another
// step lands first, so a question is answered at most once.
func Reply(ctx context.Context, s *cairn.Session, input json.RawMessage) (*cairn.Step, error) {
	return ReplyTo(ctx, s, input, nil)
}

// ReplyTo is Reply fenced on the question the human read: with question
// set, it fails with ErrQuestionMoved (a conflict) unless the question
// being answered is the one at step *question, so an answer never goes to
// a question asked after the human looked (another worker withdrew the
// one shown and asked another). Nil answers whatever the head asks.
func ReplyTo(ctx context.Context, s *cairn.Session, input json.RawMessage, question *uint64) (*cairn.Step, error) {
	return ReplyWith(ctx, s, input, ReplyOptions{Question: question})
}

// ReplyOptions fence and name a reply (ReplyWith).
type ReplyOptions struct {
	// Question, if set, is the step of the question the human read: the
	// reply fails with ErrQuestionMoved unless it answers that one.
	Question *uint64
	// IdempotencyKey, if set, names this reply so that retrying it
	// lands one answer, however often its answer was lost, as
	// cairn.CommitOptions.IdempotencyKey names a commit. A retry whose
	// reply already landed (the head, or with Question the step right
	// after the question, holds the key, with the same input) returns
	// that step with Step.Replayed set and writes nothing; the key on
	// another step is cairn.ErrKeyUsed. Without a key a reply whose
	// question was answered fails with ErrNotAwaiting, as before.
	IdempotencyKey string
}

// ReplyWith is ReplyTo with options. A reply with a key costs what one
// without costs; only a retry that meets its earlier try reads more.
func ReplyWith(ctx context.Context, s *cairn.Session, input json.RawMessage, opts ReplyOptions) (*cairn.Step, error) {
	if !json.Valid(input) {
		return nil, fmt.Errorf("reply to %s: input is not valid JSON", s.Name())
	}
	if len(input) > MaxInput {
		return nil, fmt.Errorf("reply to %s: input of %d bytes exceeds %d", s.Name(), len(input), MaxInput)
	}
	if at := jsontext.Deeper(input, MaxInputDepth); at >= 0 {
		// Said of the input, not of the record it would be stored in
		// (whose offsets are not the input's).
		return nil, &inputError{fmt.Sprintf("reply to %s: input is nested too deep: more than %d levels at offset %d", s.Name(), MaxInputDepth, at)}
	}
	if opts.IdempotencyKey != "" {
		if err := cairn.ValidIdempotencyKey(opts.IdempotencyKey); err != nil {
			return nil, fmt.Errorf("reply to %s: %w", s.Name(), err)
		}
	}
	head, err := s.Head(ctx)
	if nf := (*cairn.NotFoundError)(nil); errors.As(err, &nf) {
		// It names the session: "reply to x: session x not found" said
		// it twice.
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("reply to %s: %w", s.Name(), err)
	}
	// asked is the step whose state the reply carries and number the
	// question it answers: the head, or, for a retry, the state its
	// earlier try carried and the question that try answered.
	asked, number := head, head.Number
	earlier, err := earlierReply(ctx, s, head, opts)
	if err != nil {
		return nil, fmt.Errorf("reply to %s: %w", s.Name(), err)
	}
	if earlier != nil {
		asked, number = earlier, earlier.Number
	}
	if opts.Question != nil && number != *opts.Question {
		return nil, fmt.Errorf("reply to %s: %w: expected the question at %s@%d, but the head is %s (%s)",
			s.Name(), ErrQuestionMoved, s.Name(), *opts.Question, head, head.Status)
	}
	if earlier == nil && head.Status != cairn.AwaitingInput {
		return nil, fmt.Errorf("reply to %s: %s is %s: %w", s.Name(), head, head.Status, ErrNotAwaiting)
	}
	rec := struct {
		Reply     json.RawMessage `json:"reply"`
		InReplyTo uint64          `json:"in_reply_to"`
	}{input, number}
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("reply to %s: %w", s.Name(), err)
	}
	// With a key, the commit compares itself with the step holding it:
	// the same reply is answered with that step, any other is a conflict.
	return s.Commit(ctx, cairn.StateOf(asked), cairn.CommitOptions{
		Record: b, Status: cairn.Running, Expect: cairn.ExpectHead(number), Reply: true,
		IdempotencyKey: opts.IdempotencyKey,
	})
}

// earlierReply finds, for a reply with opts.IdempotencyKey, a step that
// may be an earlier try of it whose answer was lost: the head, if it
// holds the key, or, with opts.Question, the step right after the
// question, if the session moved past it and that step holds the key.
// It returns that step's parent, the step the earlier try answered,
// or nil if there is none. It reads only on those paths: the parent,
// and the step after the question if the head is not it.
func earlierReply(ctx context.Context, s *cairn.Session, head *cairn.Step, opts ReplyOptions) (*cairn.Step, error) {
	key := opts.IdempotencyKey
	try := head
	switch {
	case key == "":
		return nil, nil
	case head.IdempotencyKey == key:
	case opts.Question == nil || head.Number <= *opts.Question+1:
		return nil, nil
	default:
		st, err := s.Step(ctx, *opts.Question+1)
		if errors.Is(err, cairn.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if st.IdempotencyKey != key {
			return nil, nil
		}
		try = st
	}
	if try.Parent == nil || try.Session != s.Name() || try.Parent.Session != s.Name() {
		// A session's first step answers no question of its own: the
		// commit finds the key on a step that is no such reply.
		return nil, nil
	}
	asked, err := try.ParentStep(ctx)
	if err != nil {
		return nil, err
	}
	return asked, nil
}

// Inbox lists the sessions whose head awaits input, in name order. A
// session whose head is damaged (cairn.ErrCorrupt) does not stop it: the
// others are listed and the error, a *cairn.UnreadableError, names each
// damaged one. It reads each head without keeping it
// (Workspace.EachHead), so a long-running server that lists the inbox
// does not pin every session's head in its workspace. A removed session's
// head is the tombstone that fences it, which is done, not awaiting input.
func Inbox(ctx context.Context, ws *cairn.Workspace) ([]Pending, error) {
	out := []Pending{}
	err := ws.EachHead(ctx, "", func(head *cairn.Step) error {
		if head.Status != cairn.AwaitingInput {
			return nil
		}
		p := Pending{Session: head.Session, Step: head.Number, ID: head.ID.String(), Time: head.Time,
			Question: Question(head.Record), Record: head.Record}
		if p.Question == nil {
			p.Question = json.RawMessage("null")
		}
		if p.Record == nil {
			p.Record = json.RawMessage("null")
		}
		out = append(out, p)
		return nil
	})
	var damaged *cairn.UnreadableError
	if errors.As(err, &damaged) {
		return out, fmt.Errorf("inbox: %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	return out, nil
}
