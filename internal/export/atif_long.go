package export

import (
	"bytes"
	"fmt"
)

// An ATIF line is one JSON value, and an ATIF step may change after the
// cairn step that made it (a tool result joins the agent step that made
// its call, however far back; usage recorded without an answer goes to
// the last agent step), while the header before the steps names the
// agent and the model the oldest steps give. A trajectory too long to
// hold (long.go) is read again, oldest first: once through a dry
// atifBuilder, which learns the header, the final metrics (sums), the
// steps' verdict, every tool call id (a renamed one must not take an id
// the agent uses later) and, for each ATIF step a later cairn step
// changes, the last one that does; then to write the ATIF steps, each as
// soon as no step still to be read changes it. What it holds is the
// tool call ids, and the ATIF steps from the oldest one still waiting
// for a result or usage to the step being read: one run in the usual
// case, where a call's results follow it closely.

// writeATIFLong writes the ATIF line of a trajectory too long to hold:
// the bytes atifLine's value is written as, an ATIF step at a time.
func (w *jsonlWriter) writeATIFLong(t *Trajectory) (verdict, error) {
	var v verdict
	l := t.long
	taken := map[string]bool{}
	dry := newATIFBuilder(&v, map[string]bool{})
	dry.dry, dry.later = true, map[int]int{}
	unpaired, err := l.eachSettled(func(s Step) error {
		takeATIFCallIDs(taken, s)
		dry.add(s)
		return nil
	})
	if err != nil {
		return v, err
	}
	t.unpaired = unpaired
	if dry.n == 0 {
		v.skip = reasonNoATIFSteps
		return v, nil
	}
	doc, err := textJSON(dry.doc(t))
	if err != nil {
		return v, err
	}
	// The document with no steps, split where its steps go: no text of
	// it holds `,"steps":[]` before the field, its quotes escaped.
	before, after, ok := bytes.Cut(doc, []byte(`,"steps":[]`))
	if !ok {
		return v, fmt.Errorf("atif document of %s has no list of steps", l.head)
	}
	w.bw.Write(before)
	w.bw.WriteString(`,"steps":[`)
	b := newATIFBuilder(&verdict{}, taken)
	b.later = dry.later
	written := 0
	_, err = l.eachSettled(func(s Step) error {
		b.add(s)
		if b.gone {
			return fmt.Errorf("read trajectory of %s again: %s changes an ATIF step it did not the first time", l.head, s.Step)
		}
		steps := b.settled()
		for i, st := range steps {
			if written > 0 {
				w.bw.WriteByte(',')
			}
			written++
			line, err := textJSON(st)
			if err != nil {
				return err
			}
			if _, err := w.bw.Write(line); err != nil {
				return err
			}
			steps[i] = atifStep{}
		}
		return nil
	})
	if err != nil {
		return v, err
	}
	if written != dry.n || len(b.steps) > 0 {
		return v, fmt.Errorf("read trajectory of %s again: %d ATIF steps written, but %d the first time", l.head, written, dry.n)
	}
	w.bw.WriteByte(']')
	w.bw.Write(after)
	_, err = w.bw.WriteString("\n")
	return v, err
}
