package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/internal/export"
	"github.com/cairnlog/cairn/internal/hitl"
	"github.com/cairnlog/cairn/internal/termtext"
)

const replayUsage = "SESSION[@N] [--from K] [--full] [--json]"

var replayCmd = command{
	summary:   "replay a session's history oldest first: each step's messages and what it changed in the state",
	usage:     replayUsage,
	run:       runReplay,
	needStore: true,
}

// replayClip is how many characters of a message or a record line the
// text form shows without --full.
const replayClip = 240

// maxReplayChanges is how many changed paths the text form lists a
// step without --full.
const maxReplayChanges = 20

// replayLine is one step of `cairn replay --json`: the step as `cairn
// log --json` gives it, and its changes.
type replayLine struct {
	logLine
	// Changes are the state's changes from the step before it in the
	// replay.
	Changes []cairn.Change `json:"-"`
	// ChangesJSON are Changes as diff --json writes them: [] for a state
	// unchanged, absent for a step compared with none (the first step
	// replayed without its parent: its whole state is new) or with a
	// state of the other kind.
	ChangesJSON *[]changeJSON `json:"changes,omitempty"`
	// Replaced says the step's state is of another kind than its
	// parent's (a JSON document after a directory, or the reverse).
	Replaced bool `json:"replaced,omitempty"`
	// Messages, for a step of a framework adapter's session (LangGraph,
	// ADK), are the chat messages the step added to the conversation the
	// adapter keeps in its state, read as export reads them.
	Messages []cairn.Message `json:"messages,omitempty"`
}

// errReplayFloor ends the walk below --from.
var errReplayFloor = errors.New("below the first step to replay")

func runReplay(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "replay", replayUsage)
	asJSON := fs.Bool("json", false, "one JSON object per step, oldest first")
	full := fs.Bool("full", false, "show messages and records whole, and every changed path")
	// 0, never a value it takes, is --from left out: an empty --from is
	// refused like any other bad value.
	from := fs.wholeIn("from", 0, 1, math.MaxUint64, "a step number", "", "start at step `K` of the history (default: its first step)")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	floor := *from
	ws, steps, err := e.openSteps(ctx, pos[0])
	if err != nil {
		return err
	}
	defer ws.Close()
	// A replay reads each step about once, as an export does: a small
	// cache keeps its memory flat however long the history (with the
	// default one, a replay of 100,000 steps peaked at 650 MB).
	ws.SetCacheLimit(walkCacheBytes)
	last := steps[0]
	if floor > last.Number {
		return usagef("--from %d: the history of %s ends at step %d", floor, last, last.Number)
	}
	// The history newest first, down to the step before --from, whose
	// state the first step replayed is compared with. A framework
	// adapter's session (LangGraph, ADK) keeps its conversation in its
	// state, read from these very steps as export reads it: they are
	// held whole while the history may be such a session's. Any other
	// history is kept as references, a step held whole keeping its
	// layout (kilobytes each over a long session), and each step is read
	// again as it is replayed.
	type stepAt struct {
		session string
		number  uint64
		id      cas.ID
	}
	var (
		whole   []*cairn.Step // while the history may be an adapter's
		refs    []stepAt      // once it cannot be
		oldest  *cairn.Step
		held    = true
		adapter = false
	)
	err = last.Log(ctx, func(s *cairn.Step) error {
		if s.Number+1 < floor {
			return errReplayFloor
		}
		if held && export.RulesOutAdapter(s.Record) {
			for _, w := range whole {
				refs = append(refs, stepAt{w.Session, w.Number, w.ID})
			}
			held, whole = false, nil
		}
		if held {
			whole = append(whole, s)
		} else {
			refs = append(refs, stepAt{s.Session, s.Number, s.ID})
		}
		oldest = s
		adapter = adapter || export.AdapterRecord(s.Record)
		return nil
	})
	if err != nil && !errors.Is(err, errReplayFloor) {
		return err
	}
	var chats map[cas.ID]*cairn.Record
	if held && adapter {
		if chats, err = adapterChats(ctx, ws, whole); err != nil {
			return err
		}
	}
	// step returns the i-th step of the history, newest first.
	step := func(i int) (*cairn.Step, error) {
		if held {
			return whole[i], nil
		}
		at := refs[i]
		if i == len(refs)-1 {
			return oldest, nil
		}
		s, err := ws.ReadStep(ctx, at.session, at.number)
		if err != nil {
			return nil, err
		}
		if s.ID != at.id {
			return nil, fmt.Errorf("%s@%d changed while it was replayed (removed, pruned or recreated): replay again", at.session, at.number)
		}
		return s, nil
	}
	first := len(whole) + len(refs) - 1
	var prev *cairn.Step
	if floor > 1 && oldest.Number+1 == floor {
		// The step before the first one replayed, so that its changes
		// show too.
		prev, first = oldest, first-1
	}
	// Each step is written once it was read whole, as it comes: a
	// replay streams (a long history starts printing at once, and stops
	// reading when its reader goes away). One that fails part-way (a
	// state beyond a limit, a damaged step) has written the whole steps
	// before it, then exits 1 naming the step it stopped at.
	out := &replayWriter{w: e.stdout, full: *full}
	enc := json.NewEncoder(e.stdout)
	for i := first; i >= 0; i-- {
		s, err := step(i)
		if err != nil {
			return err
		}
		line := replayLine{logLine: newLogLine(s)}
		if chat := chats[s.ID]; chat != nil {
			line.Messages = chat.Messages
		}
		if prev != nil {
			if prev.Kind != s.Kind {
				line.Replaced = true
			} else if line.Changes, err = ws.Diff(ctx, prev, s); err != nil {
				return err
			}
		}
		if *asJSON {
			if prev != nil && !line.Replaced {
				cj := changesJSON(line.Changes)
				if cj == nil {
					cj = []changeJSON{}
				}
				line.ChangesJSON = &cj
			}
			err = enc.Encode(line)
		} else {
			err = out.step(s, prev != nil, line, chats[s.ID])
		}
		if err != nil {
			return err
		}
		prev = s
	}
	return nil
}

// replayWriter writes the text form of a replay.
type replayWriter struct {
	w    io.Writer
	full bool
	err  error
}

func (r *replayWriter) printf(format string, a ...any) {
	if r.err == nil {
		_, r.err = fmt.Fprintf(r.w, format, a...)
	}
}

// text makes s one printable line, clipped unless --full.
func (r *replayWriter) text(s string) string {
	s = termtext.Printable(s)
	if !r.full {
		s = termtext.Clip(s, replayClip)
	}
	return s
}

// step writes one step: a header, its record, its changes.
func (r *replayWriter) step(s *cairn.Step, hasPrev bool, line replayLine, chat *cairn.Record) error {
	head := fmt.Sprintf("%s  %s  %s", termtext.Printable(s.String()), s.Time.Local().Format("2006-01-02 15:04:05"), termtext.Printable(s.Status.String()))
	if s.Origin != nil {
		head += "  (fork of " + termtext.Printable(*refString(s.Origin)) + ")"
	}
	if s.Truncated {
		head += "  (older history pruned)"
	}
	r.printf("%s\n", head)
	if chat != nil {
		r.chat(chat, nil)
	} else {
		r.record(s)
	}
	switch {
	case line.Replaced:
		r.printf("  state replaced: %s after %s\n", kindName(s.Kind), otherKind(s.Kind))
	case !hasPrev:
		if s.Truncated {
			// Its parent was pruned: there is nothing to compare it with.
			r.printf("  state: %s (the steps before it were pruned)\n", kindName(s.Kind))
		} else {
			r.printf("  state: %s, all new\n", kindName(s.Kind))
		}
	case len(line.Changes) == 0:
		r.printf("  state: unchanged\n")
	}
	for i, c := range line.Changes {
		if !r.full && i == maxReplayChanges {
			r.printf("  ... and %d more changes (--full lists them)\n", len(line.Changes)-i)
			break
		}
		p := termtext.Printable(c.Path)
		if p == "" {
			p = "(the whole document)"
		}
		r.printf("  %-8s %s\n", c.Kind, p)
	}
	return r.err
}

// record writes a step record: the convention's messages and figures
// in words, any other record as its JSON.
func (r *replayWriter) record(s *cairn.Step) {
	raw := s.Record
	if len(raw) == 0 {
		return
	}
	if input, question, ok := hitl.ReplyOf(raw); ok {
		r.printf("  reply to %s@%d: %s\n", termtext.Printable(s.Session), question, r.text(termtext.PrintableJSON(string(input))))
		return
	}
	// A question to a human, outside the convention, is said as cairn
	// inbox says it, whatever else the record holds.
	question := hitl.Question(raw)
	if string(question) == "null" {
		question = nil
	}
	rec, err := cairn.ParseRecord(raw)
	if err != nil {
		if question != nil {
			r.printf("  question: %s\n", r.text(questionWords(question)))
			var members map[string]json.RawMessage
			if json.Unmarshal(raw, &members) == nil && len(members) == 1 {
				return // the question is the whole record
			}
		}
		r.printf("  record: %s\n", r.text(termtext.PrintableJSON(string(raw))))
		return
	}
	r.chat(rec, question)
}

// chat writes a record of the convention: its messages, a question to a
// human if there is one, and its figures.
func (r *replayWriter) chat(rec *cairn.Record, question json.RawMessage) {
	for _, m := range rec.Messages {
		who := m.Role
		if m.Role == "tool" {
			who = "tool"
			if m.Name != "" {
				who += " " + m.Name
			} else if m.ToolCallID != "" {
				who += " " + m.ToolCallID
			}
		}
		who = termtext.Printable(who)
		if m.Reasoning != "" {
			r.printf("  %s (reasoning): %s\n", who, r.text(m.Reasoning))
		}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			r.printf("  %s: %s\n", who, r.text(m.Content))
		}
		for _, tc := range m.ToolCalls {
			r.printf("  %s calls %s\n", who, r.text(tc.Name+"("+callArguments(tc.Arguments)+")"))
		}
	}
	if question != nil {
		r.printf("  question: %s\n", r.text(questionWords(question)))
	}
	var facts []string
	if rec.Model != "" {
		facts = append(facts, "model "+rec.Model)
	}
	if t := rec.Tokens; t != nil {
		facts = append(facts, fmt.Sprintf("tokens %d in, %d out", t.Prompt, t.Completion))
	}
	if rec.CostUSD != nil {
		facts = append(facts, fmt.Sprintf("cost $%g", *rec.CostUSD))
	}
	if rec.LatencyMS != nil {
		facts = append(facts, fmt.Sprintf("%g ms", *rec.LatencyMS))
	}
	if rec.Outcome != "" {
		facts = append(facts, "outcome "+rec.Outcome)
	}
	if rec.Reward != nil {
		facts = append(facts, fmt.Sprintf("reward %g", *rec.Reward))
	}
	if rec.Tools != nil {
		facts = append(facts, fmt.Sprintf("%d tools offered", len(rec.Tools)))
	}
	if len(facts) > 0 {
		r.printf("  (%s)\n", r.text(strings.Join(facts, ", ")))
	}
}

// callArguments is a tool call's arguments as one line: an object's
// JSON, or the text of a string (OpenAI's form).
func callArguments(raw json.RawMessage) string {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return termtext.PrintableJSON(string(raw))
}

// otherKind names the kind a state replaced.
func otherKind(k cairn.Kind) string {
	if k == cairn.KindJSON {
		return kindName(cairn.KindDir)
	}
	return kindName(cairn.KindJSON)
}

// adapterChats reads the conversation of a framework adapter's session
// from steps, its history newest first, as export does, and returns the
// record of each step that added messages to it, by step. Nothing is
// read before the oldest of steps: its record holds the whole
// conversation so far.
func adapterChats(ctx context.Context, ws *cairn.Workspace, steps []*cairn.Step) (map[cas.ID]*cairn.Record, error) {
	path := slices.Clone(steps)
	slices.Reverse(path)
	t, err := export.Conversation(ctx, ws, path)
	if err != nil {
		return nil, err
	}
	chats := map[cas.ID]*cairn.Record{}
	for _, s := range t.Steps {
		if s.Rec != nil && len(s.Rec.Messages) > 0 && export.AdapterRecord(s.Record) {
			chats[s.ID] = s.Rec
		}
	}
	return chats, nil
}
