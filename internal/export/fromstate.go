package export

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/cairnlog/cairn"
)

// Sessions written by cairn's framework adapters keep their conversation
// in their state, not in their records: cairn's LangGraph.js checkpointer
// (clients/langgraph) keeps LangGraph's "messages" channel in each
// checkpoint's state, and the ADK session service (adapters/adk) keeps the
// session's events in each step's state; their records only say what the
// step is. Export reads such a trajectory's conversation from the states,
// so that it exports as any session whose records follow docs/records.md:
// each step that holds the conversation is given the messages it added,
// with the model and token counts of the model calls among them.

// stateChat reads the conversation one adapter keeps in its sessions'
// states.
type stateChat interface {
	// step reports whether rec is the adapter's record (ok), and whether
	// that step's state holds the conversation so far (reads); a step
	// that does not adds no messages.
	step(rec json.RawMessage) (reads, ok bool)
	// elements returns the conversation as stored in a state, one element
	// per message or event; ok is false if the state holds none.
	elements(state []byte) (elems []json.RawMessage, ok bool, err error)
	// convert returns the messages of one element, with the model and
	// token counts of the model call it is, if it is one.
	convert(elem json.RawMessage) (msgs []cairn.Message, model string, tokens *cairn.Tokens, err error)
	// where names the step of rec in errors ("checkpoint ID", "event ID").
	where(rec json.RawMessage) string
	// pointer is the JSON pointer (RFC 6901) of the list elements
	// returns, in a state.
	pointer() string
}

// stateChats are the adapters whose sessions export reads this way.
var stateChats = []stateChat{langGraphChat{}, adkChat{}}

// stateChatOf returns the adapter that wrote t's records, if one did:
// every record of t is that adapter's, but for records that follow the
// convention without messages (an outcome, a reward or labels a person or
// a judge committed on the session, which keep their meaning), and at
// least one is the adapter's.
func stateChatOf(t *Trajectory) stateChat {
	for _, c := range stateChats {
		found, other := false, false
		for _, s := range t.Steps {
			if len(s.Record) == 0 {
				continue
			}
			if _, ok := c.step(s.Record); ok {
				found = true
			} else if s.Rec == nil || len(s.Rec.Messages) > 0 {
				other = true
				break
			}
		}
		if found && !other {
			return c
		}
	}
	return nil
}

// stateChatError is a Step.Broken of an adapter's session: its
// conversation cannot be read from its states.
type stateChatError struct{ err error }

func (e *stateChatError) Error() string { return e.err.Error() }
func (e *stateChatError) Unwrap() error { return e.err }

// fromState gives the steps of t, written by the adapter c, the records
// export reads: see the comment at the top of this file. A step whose
// conversation cannot be read is marked Broken, as a record that breaks
// the convention is.
//
// Every state holds the whole conversation so far, so reading each one
// would cost the square of the conversation's length. Instead, each step
// is compared with the one before it (Workspace.Diff, whose cost follows
// what changed), which says how many elements it appended to the list, or
// that it changed one before them (then its steps are not one
// conversation); only the newest state is read whole, and its elements
// are handed out by those counts. A step whose diff does not say (the
// list appears, or is replaced whole) is read whole, with the one before.
func (e *exporter) fromState(ctx context.Context, t *Trajectory, c stateChat) error {
	counts := make([]int, len(t.Steps))
	var (
		prev      = -1 // the last step that reads
		whole     []json.RawMessage
		wholeStep = -1 // the step whose elements whole holds
	)
	// read returns the list's elements in step i's state (none if the
	// state holds no list), or marks the step Broken if they cannot be read.
	read := func(i int) ([]json.RawMessage, error) {
		s := &t.Steps[i]
		state, err := s.JSON(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the conversation of %s: %w", s.Step, err)
		}
		elems, _, err := c.elements(state)
		if err != nil {
			s.Broken = &stateChatError{fmt.Errorf("%s: %v", c.where(s.Record), err)}
		}
		return elems, nil
	}
	rewrote := func(s *Step) {
		s.Broken = &stateChatError{fmt.Errorf("%s removed or changed messages of the conversation before it, so its steps are not one conversation", c.where(s.Record))}
	}
	// reads marks the steps whose state holds the conversation so far.
	reads := make([]bool, len(t.Steps))
	for i := range t.Steps {
		s := &t.Steps[i]
		var ok bool
		if reads[i], ok = c.step(s.Record); !ok {
			continue // no record, or a conventional one without messages
		}
		s.Rec = &cairn.Record{}
		if !reads[i] {
			continue
		}
		if prev >= 0 {
			n, known, rewritten, err := appended(ctx, e.ws, t.Steps[prev].Step, s.Step, c.pointer(), counts[prev])
			if err != nil {
				return err
			}
			if rewritten {
				rewrote(s)
				return nil
			}
			if known {
				counts[i], prev = n, i
				continue
			}
		}
		elems, err := read(i)
		if err != nil || s.Broken != nil {
			return err
		}
		if prev >= 0 && counts[prev] > 0 {
			before := whole
			if wholeStep != prev {
				if before, err = read(prev); err != nil || t.Steps[prev].Broken != nil {
					return err
				}
			}
			if !samePrefix(before, elems) {
				rewrote(s)
				return nil
			}
		}
		counts[i], prev, whole, wholeStep = len(elems), i, elems, i
	}
	if prev < 0 {
		return nil
	}
	if wholeStep != prev {
		elems, err := read(prev)
		if err != nil || t.Steps[prev].Broken != nil {
			return err
		}
		if len(elems) != counts[prev] {
			return fmt.Errorf("read the conversation of %s: %d messages, but its steps added %d", t.Steps[prev].Step, len(elems), counts[prev])
		}
		whole = elems
	}
	var size int64
	for _, el := range whole {
		size += int64(len(el))
	}
	if err := reserve(ctx, 2*size); err != nil {
		return err
	}
	from := 0
	for i := range t.Steps {
		if !reads[i] {
			continue
		}
		s := &t.Steps[i]
		rec := s.Rec
		for n, el := range whole[from:counts[i]] {
			msgs, model, tokens, err := c.convert(el)
			if err != nil {
				s.Broken = &stateChatError{fmt.Errorf("%s: message %d: %v", c.where(s.Record), from+n+1, err)}
				s.Rec = nil
				return nil
			}
			addConverted(rec, msgs, model, tokens)
		}
		from = counts[i]
	}
	return nil
}

// appended compares step b with a, whose state held had elements of the
// list at pointer: it returns the number of elements b's list holds if
// the difference says (known), or that b changed or removed one of the
// first had (rewritten).
func appended(ctx context.Context, ws *cairn.Workspace, a, b *cairn.Step, pointer string, had int) (n int, known, rewritten bool, err error) {
	changes, err := ws.Diff(ctx, a, b)
	if err != nil {
		return 0, false, false, fmt.Errorf("compare %s with %s: %w", b, a, err)
	}
	n = had
	added := 0
	for _, ch := range changes {
		if ch.Path == pointer || strings.HasPrefix(pointer, ch.Path+"/") || ch.Path == "" {
			return 0, false, false, nil // the list itself appeared or was replaced
		}
		rest, ok := strings.CutPrefix(ch.Path, pointer+"/")
		if !ok {
			continue // elsewhere in the state
		}
		tok, deeper, _ := strings.Cut(rest, "/")
		k, err := strconv.Atoi(tok)
		if err != nil || k < 0 {
			return 0, false, false, nil
		}
		if k < had {
			return 0, false, true, nil
		}
		if deeper != "" || ch.Kind != cairn.Added {
			return 0, false, false, nil
		}
		added++
		n = max(n, k+1)
	}
	if n-had != added {
		return 0, false, false, nil
	}
	return n, true, false, nil
}

// samePrefix reports whether prev is a prefix of elems, element by
// element (adapters store an unchanged element the same way each time;
// equal JSON values spelt differently count as the same).
func samePrefix(prev, elems []json.RawMessage) bool {
	if len(prev) > len(elems) {
		return false
	}
	for i := range prev {
		if !bytes.Equal(prev[i], elems[i]) && !sameJSON(prev[i], elems[i]) {
			return false
		}
	}
	return true
}

// sameJSON compares two JSON texts by value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ax, _ := json.Marshal(x)
	by, _ := json.Marshal(y)
	return bytes.Equal(ax, by)
}

// jsonKind names the kind of a JSON value in words.
func jsonKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "empty"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "true or false"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// addConverted adds to rec what one element of an adapter's state
// converted to: its messages, its model (the newest wins) and its
// tokens (summed).
func addConverted(rec *cairn.Record, msgs []cairn.Message, model string, tokens *cairn.Tokens) {
	rec.Messages = append(rec.Messages, msgs...)
	if model != "" {
		rec.Model = model
	}
	if tokens != nil {
		if rec.Tokens == nil {
			rec.Tokens = &cairn.Tokens{}
		}
		rec.Tokens.Prompt += tokens.Prompt
		rec.Tokens.Completion += tokens.Completion
		rec.Tokens.Cached += tokens.Cached
	}
}
