package export

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cairnlog/cairn"
)

// A trajectory is a path of history read newest first (Step.Log), but
// written oldest first, and some of what a format writes first depends
// on its newest steps (the trajectory's outcome and reward on every
// Parquet row; which messages a chat line keeps, or whether it is
// written at all). The formats of longFormat therefore hold a trajectory
// whole only up to holdSteps steps and holdBytes. A longer one is read
// again: a first pass keeps what must be known before writing (counts,
// labels, outcome, reward, model, tools, the tool call ids a fresh one
// must not take) and cuts the path in runs of steps that can be held,
// keeping each run's newest step; the writer then reads the path again,
// a run at a time, oldest first (eachStep, eachSettled) — the chat
// formats and ATIF once to check it and once to write — and writes each
// step's row, messages, turns or ATIF steps as it goes (a step waits
// only for a tool result's id, settled when its run of results ends; an
// ATIF step also for the later results and usage joined to it). What it
// holds is flat in the trajectory's length but for one step per run
// (and ATIF's tool call ids). Should a
// read fail part-way through a chat line (the store damaged or pruned
// between two passes), the export fails, its error naming the session
// and the step gone: --out naming a file then removes its temporary
// file, as on any failure, and an output that cannot be taken back
// (stdout) is given whole lines only (Options.WholeLines).

// longFormat reports whether format writes a trajectory too long to
// hold without holding it: Parquet a row at a time, openai-jsonl a
// message at a time, sharegpt a turn at a time (openai_long.go), atif an
// ATIF step at a time (atif_long.go), preference pairs a message at a
// time (preference.go).
func longFormat(format string) bool {
	return format == Parquet || format == OpenAIJSONL || format == ShareGPT || format == ATIF || format == Preference
}

// holdSteps and holdBytes bound the steps of a trajectory the formats
// of longFormat hold at a time: at most holdSteps steps, holding at most
// holdBytes (stepBytes) but for one step larger alone. Variables for
// tests.
var (
	holdSteps       = 1024
	holdBytes int64 = 8 << 20
)

// stepBytes is what export holds of st read: its manifest, its record
// and the record parsed (which copies its text).
func stepBytes(st *cairn.Step) int64 { return st.ManifestBytes + 2*int64(len(st.Record)) + 512 }

// run is a run of steps of a long path, read at once the second time.
type run struct {
	newest *cairn.Step
	n      int   // its steps
	bytes  int64 // what they hold (stepBytes)
}

// full reports whether r is as long as one run may be, or would hold
// too much with st.
func (r *run) full(st *cairn.Step) bool {
	return r.n == holdSteps || r.n > 0 && r.bytes+stepBytes(st) > holdBytes
}

// longPath is a trajectory too long to hold: what its first pass
// learned, and where the later ones start reading.
type longPath struct {
	ctx   context.Context
	n     int   // steps
	raw   int64 // steps whose record does not follow the convention
	msgs  int   // messages of the steps' records
	first *cairn.Step
	head  *cairn.Step
	// runs cut the path in runs of steps that can be held, newest first.
	runs []run
	// taken holds the tool call ids of the path that a fresh id could
	// be (mayBeFresh).
	taken map[string]bool
	// model is the newest model named, forkedFrom the origin of the
	// head's session if it is a fork, tools the newest tools listed:
	// what metadataOf and toolsOf read of a held trajectory.
	model, forkedFrom string
	tools             []json.RawMessage
	toolsSeen         bool
	// adapter is set if a framework adapter wrote the path's records:
	// its conversation is read from its states (fromstate_long.go),
	// through ws.
	adapter *adapterPath
	ws      *cairn.Workspace
}

// firstPass folds a trajectory's steps, fed newest first, into what
// must be known before its rows are written.
type firstPass struct {
	l        *longPath
	labels   map[string]string
	outcome  *judgement // the newest step's that gives one
	reward   *judgement
	unjudged struct{ outcome, reward string }
	// adapter[i]: stateChats[i] wrote some record, other: and another
	// record than its own and verdicts (see stateChatOf).
	adapter, other []bool
}

func newFirstPass(ctx context.Context, h *cairn.Step) *firstPass {
	return &firstPass{
		l:      &longPath{ctx: ctx, head: h, taken: map[string]bool{}},
		labels: map[string]string{}, adapter: make([]bool, len(stateChats)), other: make([]bool, len(stateChats)),
	}
}

// add folds in s, the step older than the last one added.
func (f *firstPass) add(s Step) {
	if k := len(f.l.runs); k == 0 || f.l.runs[k-1].full(s.Step) {
		f.l.runs = append(f.l.runs, run{newest: s.Step})
	}
	r := &f.l.runs[len(f.l.runs)-1]
	r.n++
	r.bytes += stepBytes(s.Step)
	for i, c := range stateChats {
		if len(s.Record) == 0 {
			break
		}
		if _, ok := c.step(s.Record); ok {
			f.adapter[i] = true
		} else if s.Rec == nil || len(s.Rec.Messages) > 0 {
			f.other[i] = true
		}
	}
	if s.Rec != nil {
		if err := settleArguments(s.Rec); err != nil {
			s.Rec, s.Broken = nil, fmt.Errorf("step record: %w", err)
		}
	}
	l := f.l
	l.n++
	l.first = s.Step
	if s.Rec == nil && len(s.Record) > 0 {
		l.raw++
	}
	if s.Origin != nil && s.Session == l.head.Session && l.forkedFrom == "" {
		l.forkedFrom = refName(*s.Origin)
	}
	if r := s.Rec; r != nil {
		l.msgs += len(r.Messages)
		if l.model == "" {
			l.model = r.Model
		}
		if r.Tools != nil && !l.toolsSeen {
			l.toolsSeen = true
			if len(r.Tools) > 0 {
				l.tools = r.Tools
			}
		}
		for k, v := range r.Labels {
			if _, newer := f.labels[k]; !newer {
				f.labels[k] = v
			}
		}
		l.takeIDs(r.Messages)
	}
	j := judgementOf(s)
	if j.hasOutcome && f.outcome == nil {
		f.outcome = &j
		if j.unread {
			f.unjudged.outcome = unreadAt(s)
		}
	}
	if j.hasReward && f.reward == nil {
		f.reward = &j
		if j.unread {
			f.unjudged.reward = unreadAt(s)
		}
	}
}

// stateChat returns the adapter that wrote the path's records, as
// stateChatOf does, or nil.
func (f *firstPass) stateChat() stateChat {
	for i, c := range stateChats {
		if f.adapter[i] && !f.other[i] {
			return c
		}
	}
	return nil
}

// trajectory returns the trajectory the first pass read.
func (f *firstPass) trajectory() *Trajectory {
	t := &Trajectory{Session: f.l.head.Session, Labels: f.labels, Truncated: f.l.first.Truncated, long: f.l}
	if f.outcome != nil {
		t.Outcome = f.outcome.outcome
	}
	if f.reward != nil {
		t.Reward = f.reward.reward
	}
	t.Unjudged = cmp.Or(f.unjudged.outcome, f.unjudged.reward)
	return t
}

// rereadRun, if set (by tests), is called with the head of a path too
// long to hold before each run of it is read again.
var rereadRun func(h *cairn.Step)

// errEnough ends a Log that has read what it was asked.
var errEnough = errors.New("enough steps")

// eachStep calls fn for each step of the path, oldest first, reading
// one run of them at a time.
func (l *longPath) eachStep(fn func(*cairn.Step) error) error { return l.eachStepFrom(0, fn) }

// eachStepFrom is eachStep from the path's step numbered from, its
// first 0, reading no run before it.
func (l *longPath) eachStepFrom(from int, fn func(*cairn.Step) error) error {
	var steps []*cairn.Step
	seen := 0 // steps of the runs before run j
	for j := len(l.runs) - 1; j >= 0; j-- {
		want := l.runs[j].n
		if seen+want <= from {
			seen += want
			continue
		}
		if rereadRun != nil {
			rereadRun(l.head)
		}
		steps = steps[:0]
		err := l.runs[j].newest.Log(l.ctx, func(st *cairn.Step) error {
			steps = append(steps, st)
			if len(steps) == want {
				return errEnough
			}
			return nil
		})
		if err != nil && !errors.Is(err, errEnough) {
			return fmt.Errorf("read trajectory of %s again: %w", l.head, err)
		}
		if len(steps) != want {
			// Pruned or removed between the two passes: the step
			// below the last one read is gone from the history.
			gone := l.runs[j].newest.String()
			if k := len(steps); k > 0 && steps[k-1].Parent != nil {
				gone = steps[k-1].Parent.String()
			}
			return fmt.Errorf("session %s changed while it was exported: %s, in its history when first read, no longer is (pruned or removed since?); read %d of the %d steps up to %s that the first read found",
				l.head.Session, gone, len(steps), want, l.runs[j].newest)
		}
		slices.Reverse(steps)
		for k, st := range steps {
			if seen+k < from {
				continue
			}
			if err := fn(st); err != nil {
				return err
			}
		}
		seen += want
		clear(steps)
	}
	return nil
}

// eachStepOf calls fn with each step of the path from its index from
// on, oldest first, its record parsed (or, for an adapter's session,
// read from its state) and its arguments settled.
func (l *longPath) eachStepOf(from int, fn func(Step) error) error {
	if a := l.adapter; a != nil {
		return l.eachAdapted(from, func(s Step) error {
			settle(&s, a.c)
			return fn(s)
		})
	}
	return l.eachStepFrom(from, func(st *cairn.Step) error {
		s := stepOf(st)
		settle(&s, nil)
		return fn(s)
	})
}

// eachSettled calls fn with each step of the path, oldest first, its
// record settled as a held trajectory's is (arguments, tool call ids:
// see exporter.trajectory). A step waits only while a tool result of it
// has no id yet: it gets one when its run of results ends. unpaired is
// settleCallIDs's.
func (l *longPath) eachSettled(fn func(Step) error) (unpaired string, err error) {
	c := &callSettler{taken: maps.Clone(l.taken)}
	var held []Step
	flush := func() error {
		for i, s := range held {
			if err := fn(s); err != nil {
				return err
			}
			held[i] = Step{}
		}
		held = held[:0]
		return nil
	}
	err = l.eachStepOf(0, func(s Step) error {
		c.step(&s)
		held = append(held, s)
		if len(c.waiting) > 0 {
			return nil
		}
		return flush()
	})
	if err != nil {
		return "", err
	}
	c.answer()
	if err := flush(); err != nil {
		return "", err
	}
	return c.unpaired, nil
}

// takeIDs notes the tool call ids of msgs that a fresh id could collide
// with (mayBeFresh) as taken on the path.
func (l *longPath) takeIDs(msgs []cairn.Message) {
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			if mayBeFresh(tc.ID) {
				l.taken[tc.ID] = true
			}
		}
		if mayBeFresh(m.ToolCallID) {
			l.taken[m.ToolCallID] = true
		}
	}
}
