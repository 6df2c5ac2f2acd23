package export

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cairnlog/cairn"
)

// An openai-jsonl or sharegpt line is one JSON value, and what it says
// first — which messages it keeps, and whether it is written at all —
// depends on the trajectory's later steps (a tool call left unanswered
// at its end, a result no call has, trailing turns). A trajectory too
// long to hold (long.go) is read again, oldest first: once to check it
// as chatMessages and openAILine or shareGPTLine do (sharegpt once more
// if its last assistant message is cut), then to write its messages, or
// turns, one at a time.

// chatCheck is chatMessages's and openAILine's checks of a trajectory,
// fed its settled steps one at a time, oldest first.
type chatCheck struct {
	broken          bool // a step's record breaks the convention:
	brokenReason    string
	brokenExample   string
	raw             bool
	withoutCall     string // resultWithoutCall's
	afterCalls      bool
	mid             string // unansweredCalls's, when mid
	pending         []string
	open            *cairn.Step
	openAt, n, keep int
	forNoCall       string // resultForNoCall's
	answered        callsAnswered
	firstAssistant  int  // the first assistant message's index (-1: none)
	fromState       bool // the path's conversation is read from its states
}

// newChatCheck returns the check of l.
func (l *longPath) newChatCheck() *chatCheck {
	return &chatCheck{keep: -1, firstAssistant: -1, fromState: l.adapter != nil}
}

func (c *chatCheck) say() string {
	return fmt.Sprintf("%s: messages[%d]: tool call %q", c.open, c.openAt, c.pending[0])
}

func (c *chatCheck) add(s Step) {
	if s.Broken != nil && !c.broken {
		c.broken = true
		c.brokenReason, _ = brokenReasons(s.Broken)
		c.brokenExample = fmt.Sprintf("%s: %v", s.Step, s.Broken)
	}
	if s.Rec == nil {
		if len(s.Record) > 0 {
			c.raw = true
		}
		return
	}
	for i, m := range s.Rec.Messages {
		// resultWithoutCall
		switch {
		case m.Role == "tool" && !c.afterCalls:
			if c.withoutCall == "" {
				c.withoutCall = fmt.Sprintf("%s: messages[%d]: %s", s.Step, i, resultID(m.ToolCallID))
			}
		case m.Role != "tool":
			c.afterCalls = len(m.ToolCalls) > 0
		}
		// resultForNoCall
		if !c.answered.add(m) && c.forNoCall == "" {
			c.forNoCall = fmt.Sprintf("%s: messages[%d]: %s", s.Step, i, resultID(m.ToolCallID))
		}
		// unansweredCalls, which ends at a call left unanswered mid-way
		c.n++
		if m.Role == "assistant" && c.firstAssistant < 0 {
			c.firstAssistant = c.n - 1
		}
		if c.mid != "" {
			continue
		}
		if m.Role == "tool" {
			if j := slices.Index(c.pending, m.ToolCallID); j >= 0 {
				c.pending = slices.Delete(c.pending, j, j+1)
			}
			continue
		}
		if len(c.pending) > 0 {
			c.mid = c.say()
			continue
		}
		if len(m.ToolCalls) == 0 {
			continue
		}
		for _, tc := range m.ToolCalls {
			c.pending = append(c.pending, tc.ID)
		}
		c.keep, c.open, c.openAt = c.n-1, s.Step, i
	}
}

// verdict says, as openAILine would in v, whether the trajectory is
// written, and how many of its messages (keep).
func (c *chatCheck) verdict(v *verdict) (keep int, ok bool) {
	if keep, ok = c.chatVerdict(v); !ok {
		return 0, false
	}
	if c.forNoCall != "" {
		v.skip = reasonResultForNoCall
		v.explain(reasonResultForNoCall, c.forNoCall)
		return 0, false
	}
	if c.firstAssistant < 0 || c.firstAssistant >= keep {
		v.skip = reasonNoAssistantMessage
		if cut, ok := v.example[reasonUnansweredLast]; ok {
			v.explain(reasonNoAssistantMessage, "its only one, left out, calls a tool no result answers: "+cut)
		}
		return 0, false
	}
	return keep, true
}

// chatVerdict says, as chatMessages would in v, how many of the
// trajectory's messages a chat format reads (keep), or that there are
// none to read (v.skip says why).
func (c *chatCheck) chatVerdict(v *verdict) (keep int, ok bool) {
	if c.broken {
		v.skip = c.brokenReason
		v.explain(c.brokenReason, c.brokenExample)
		return 0, false
	}
	if c.withoutCall != "" {
		v.skip = reasonResultWithoutCall
		v.explain(reasonResultWithoutCall, c.withoutCall)
		return 0, false
	}
	keep = c.n
	switch {
	case c.mid != "":
		v.skip = reasonUnansweredCall
		v.explain(reasonUnansweredCall, c.mid)
		return 0, false
	case len(c.pending) > 0:
		keep = c.keep
		v.leave(reasonUnansweredLast)
		v.explain(reasonUnansweredLast, c.say())
	}
	switch {
	case keep == 0 && c.raw:
		v.skip = reasonRawOnly
	case keep == 0 && c.fromState:
		v.skip = reasonNoStateMessages
	case keep == 0:
		v.skip = reasonNoMessages
	case c.raw:
		v.leave(reasonRawLeftOut)
	}
	return keep, keep > 0
}

// writeOpenAILong writes the openai-jsonl line of a trajectory too long
// to hold: the bytes openAILine's value is written as, a message at a
// time.
func (w *jsonlWriter) writeOpenAILong(t *Trajectory) (verdict, error) {
	var v verdict
	l := t.long
	c := l.newChatCheck()
	unpaired, err := l.eachSettled(func(s Step) error { c.add(s); return nil })
	if err != nil {
		return v, err
	}
	t.unpaired = unpaired
	keep, ok := c.verdict(&v)
	if !ok {
		return v, nil
	}
	if _, err := w.bw.WriteString(`{"messages":[`); err != nil {
		return v, err
	}
	n := 0
	err = l.eachKept(0, keep, func(m cairn.Message) error {
		if n > 0 {
			w.bw.WriteByte(',')
		}
		n++
		b, err := textJSON(openAIMessages([]cairn.Message{m})[0])
		if err != nil {
			return err
		}
		_, err = w.bw.Write(b)
		return err
	})
	if err != nil {
		return v, err
	}
	w.bw.WriteByte(']')
	if len(l.tools) > 0 {
		b, err := textJSON(l.tools)
		if err != nil {
			return v, err
		}
		w.bw.WriteString(`,"tools":`)
		w.bw.Write(b)
	}
	if err := w.writeMetadata(t); err != nil {
		return v, err
	}
	_, err = w.bw.WriteString("}\n")
	return v, err
}

// writeMetadata writes `,"metadata":{…}` of a trajectory too long to
// hold, if the line has one.
func (w *jsonlWriter) writeMetadata(t *Trajectory) error {
	if !w.meta {
		return nil
	}
	m := metadataOf(t)
	b, err := textJSON(m)
	if err != nil {
		return err
	}
	w.bw.WriteString(`,"metadata":`)
	_, err = w.bw.Write(b)
	return err
}

// eachKept calls fn with the messages of the path numbered from from
// to keep (not included), settled.
func (l *longPath) eachKept(from, keep int, fn func(cairn.Message) error) error {
	k := 0
	_, err := l.eachSettled(func(s Step) error {
		if s.Rec == nil {
			return nil
		}
		for _, m := range s.Rec.Messages {
			if k == keep {
				return errEnough
			}
			k++
			if k <= from {
				continue
			}
			if err := fn(m); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errEnough) {
		err = nil
	}
	if err == nil && k != keep {
		err = fmt.Errorf("read trajectory of %s again: %d messages, but %d the first time", l.head, k, keep)
	}
	return err
}

// writeShareGPTLong writes the sharegpt line of a trajectory too long to
// hold: the bytes shareGPTLine's value is written as, a turn at a time.
func (w *jsonlWriter) writeShareGPTLong(t *Trajectory) (verdict, error) {
	var v verdict
	l := t.long
	c := l.newChatCheck()
	// The turns of every message, checked as they are read; read again
	// if the last assistant message is cut.
	var tv verdict
	nop := func(shareGPTTurn) error { return nil }
	turns := &shareGPTTurns{v: &tv, done: nop}
	unpaired, err := l.eachSettled(func(s Step) error {
		c.add(s)
		if s.Rec != nil {
			for _, m := range s.Rec.Messages {
				turns.add(m)
			}
		}
		return nil
	})
	if err != nil {
		return v, err
	}
	t.unpaired = unpaired
	keep, ok := c.chatVerdict(&v)
	if !ok {
		return v, nil
	}
	if keep < c.n {
		tv, turns = verdict{}, &shareGPTTurns{v: &tv, done: nop}
		if err := l.eachKept(0, keep, func(m cairn.Message) error { turns.add(m); return nil }); err != nil {
			return v, err
		}
	}
	turns.end()
	n, ok := turns.verdict()
	for _, r := range tv.leftOut {
		v.leave(r)
	}
	if !ok {
		v.skip = tv.skip
		return v, nil
	}
	id, err := textJSON(t.Session)
	if err != nil {
		return v, err
	}
	w.bw.WriteString(`{"id":`)
	w.bw.Write(id)
	w.bw.WriteString(`,"conversations":[`)
	written := 0
	var put *shareGPTTurns
	put = &shareGPTTurns{v: &verdict{}, done: func(turn shareGPTTurn) error {
		if written == 0 && len(put.system) > 0 {
			b, err := textJSON(put.systemTurn())
			if err != nil {
				return err
			}
			w.bw.Write(b)
			w.bw.WriteByte(',')
		}
		if written == n {
			return nil // a trailing user or tool turn
		}
		if written > 0 {
			w.bw.WriteByte(',')
		}
		written++
		b, err := textJSON(turn)
		if err != nil {
			return err
		}
		_, err = w.bw.Write(b)
		return err
	}}
	err = l.eachKept(0, keep, func(m cairn.Message) error {
		put.add(m)
		return put.err
	})
	if err == nil {
		err = put.end()
	}
	if err != nil {
		return v, err
	}
	if written != n {
		return v, fmt.Errorf("read trajectory of %s again: %d turns, but %d the first time", l.head, written, n)
	}
	w.bw.WriteByte(']')
	if len(l.tools) > 0 {
		b, err := textJSON(l.tools)
		if err != nil {
			return v, err
		}
		tools, err := textJSON(string(b))
		if err != nil {
			return v, err
		}
		w.bw.WriteString(`,"tools":`)
		w.bw.Write(tools)
	}
	if err := w.writeMetadata(t); err != nil {
		return v, err
	}
	_, err = w.bw.WriteString("}\n")
	return v, err
}
