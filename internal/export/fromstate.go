package export

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

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
}

// stateChats are the adapters whose sessions export reads this way.
var stateChats = []stateChat{langGraphChat{}, adkChat{}}

// stateChatOf returns the adapter that wrote every record of t, if one
// did (steps without a record aside, and at least one with one).
func stateChatOf(t *Trajectory) stateChat {
	for _, c := range stateChats {
		found := true
		any := false
		for _, s := range t.Steps {
			if len(s.Record) == 0 {
				continue
			}
			if _, ok := c.step(s.Record); !ok {
				found = false
				break
			}
			any = true
		}
		if found && any {
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
func (e *exporter) fromState(ctx context.Context, t *Trajectory, c stateChat) error {
	var prev []json.RawMessage
	for i := range t.Steps {
		s := &t.Steps[i]
		if reads, _ := c.step(s.Record); !reads {
			s.Rec = &cairn.Record{}
			continue
		}
		// The state is read and dropped; what the trajectory keeps of it
		// is the messages it adds, accounted below.
		state, err := s.JSON(ctx)
		if err != nil {
			return fmt.Errorf("read the conversation of %s: %w", s.Step, err)
		}
		elems, ok, err := c.elements(state)
		if err != nil {
			s.Broken = &stateChatError{fmt.Errorf("%s: %v", c.where(s.Record), err)}
			return nil
		}
		if !ok {
			s.Rec = &cairn.Record{}
			continue
		}
		if !samePrefix(prev, elems) {
			s.Broken = &stateChatError{fmt.Errorf("%s removed or changed messages of the conversation before it, so its steps are not one conversation", c.where(s.Record))}
			return nil
		}
		var added int64
		for _, el := range elems[len(prev):] {
			added += int64(len(el))
		}
		if err := reserve(ctx, 2*added); err != nil {
			return err
		}
		rec := &cairn.Record{}
		for n, el := range elems[len(prev):] {
			msgs, model, tokens, err := c.convert(el)
			if err != nil {
				s.Broken = &stateChatError{fmt.Errorf("%s: message %d: %v", c.where(s.Record), len(prev)+n+1, err)}
				return nil
			}
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
		s.Rec, s.Broken = rec, nil
		prev = elems
	}
	return nil
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
