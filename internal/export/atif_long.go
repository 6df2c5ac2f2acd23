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
// changes, what each change is (where its result is, or its usage);
// then to write the ATIF steps, each as soon as no step still to be
// read changes it. An ATIF step still waiting once a run's worth of
// steps (holdSteps, holdBytes) has been read since it was made is
// finished ahead: its results still to come are read from their steps
// at once (atifBuilder.finish), so the steps after it need not wait.
// What it holds is the tool call ids, the changes noted (a few numbers,
// or an unmatched id, each), and the ATIF steps of at most a run.

// writeATIFLong writes the ATIF line of a trajectory too long to hold:
// the bytes atifLine's value is written as, an ATIF step at a time.
func (w *jsonlWriter) writeATIFLong(t *Trajectory) (verdict, error) {
	var v verdict
	l := t.long
	taken := map[string]bool{}
	dry := newATIFBuilder(&v, map[string]bool{})
	dry.dry, dry.later, dry.late = true, map[int]int{}, map[int][]atifLate{}
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
		if l.adapter != nil {
			v.skip = reasonNoStateMessages
		}
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
	b.later, b.late, b.done = dry.later, dry.late, map[int]int{}
	written := 0
	write := func() error {
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
	}
	// The cairn steps read since the one that made the oldest ATIF step
	// held, and what they hold (stepBytes): past a run's worth, that
	// step waits for a change far ahead, and is finished ahead.
	type read struct {
		fed   int
		bytes int64
	}
	var window []read
	var windowBytes int64
	_, err = l.eachSettled(func(s Step) error {
		b.add(s)
		if b.gone {
			return fmt.Errorf("read trajectory of %s again: %s changes an ATIF step it did not the first time", l.head, s.Step)
		}
		window = append(window, read{b.fed, stepBytes(s.Step)})
		windowBytes += stepBytes(s.Step)
		for {
			if err := write(); err != nil {
				return err
			}
			since, ok := b.waitingSince()
			for len(window) > 0 && (!ok || window[0].fed < since) {
				windowBytes -= window[0].bytes
				window = window[1:]
			}
			if !ok || len(window) <= holdSteps && windowBytes <= holdBytes {
				return nil
			}
			if err := b.finish(l); err != nil {
				return err
			}
		}
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
