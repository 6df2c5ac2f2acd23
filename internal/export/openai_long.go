package export

import (
	"errors"
	"fmt"

	"github.com/cairnlog/cairn"
)

// An openai-jsonl or sharegpt line is one JSON value, and what it says
// first — which messages it keeps, and whether it is written at all —
// depends on the trajectory's later steps (a tool call left unanswered
// at its end, a result no call has, trailing turns). A trajectory too
// long to hold (long.go) is read again, oldest first: once to check it
// (chatCheck, the checks a held one goes through too; shareGPTTurns for
// sharegpt, once more if its last assistant message is cut), then to
// write its messages, or turns, one at a time.

// writeOpenAILong writes the openai-jsonl line of a trajectory too long
// to hold: the bytes openAILine's value is written as, a message at a
// time.
func (w *jsonlWriter) writeOpenAILong(t *Trajectory) (verdict, error) {
	var v verdict
	l := t.long
	c := newChatCheck(l.adapter != nil)
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
	c := newChatCheck(l.adapter != nil)
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
