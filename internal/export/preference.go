package export

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cairnlog/cairn"
)

func refName(r cairn.StepRef) string { return fmt.Sprintf("%s@%d", r.Session, r.Number) }

// preferencePair is one line of TRL's conversational preference format.
type preferencePair struct {
	Prompt   []openAIMessage `json:"prompt"`
	Chosen   []openAIMessage `json:"chosen"`
	Rejected []openAIMessage `json:"rejected"`
}

// branch is one sibling after a fork point.
type branch struct {
	head  *cairn.Step
	msgs  []cairn.Message
	steps []Step
	score float64
	// raw is set if the branch's path holds raw records, left out of
	// its messages: the first of them, to note.
	raw string
	// unanswered is set if the branch's last assistant message was left out,
	// its tool calls unanswered: where, to note.
	unanswered string
	// unpaired is set if the branch's path holds a tool result without a
	// tool_call_id that no call is left for: where, to note.
	unpaired string
}

// outcomeScores ranks outcome labels when no rewards are given.
var outcomeScores = map[string]float64{
	"success": 1, "pass": 1, "passed": 1, "chosen": 1, "good": 1, "win": 1,
	"failure": 0, "fail": 0, "failed": 0, "rejected": 0, "bad": 0, "loss": 0,
}

// judge returns the score of the newest step of a branch that carries an
// outcome (record.outcome, else labels.outcome) or a reward; ok is false
// if none does, or if that newest judgement cannot rank the branch (an
// outcome other than success, failure and their synonyms without a
// reward, or one in a record of the wrong shape): why then says so, of
// that step. An older judgement never stands in for the newest. Rewards
// rank before outcomes: reward r scores r, outcome success 1 and failure
// 0, so mixing both in one group is the caller's choice.
func judge(steps []Step) (score float64, ok bool, why string) {
	for i := len(steps) - 1; i >= 0; i-- {
		j := judgementOf(steps[i])
		switch {
		case j.unread:
			return 0, false, unreadAt(steps[i])
		case j.hasReward:
			return *j.reward, true, ""
		case j.hasOutcome:
			if s, known := outcomeScores[strings.ToLower(j.outcome)]; known {
				return s, true, ""
			}
			return 0, false, fmt.Sprintf("%s: outcome %q", steps[i].Step, j.outcome)
		}
	}
	return 0, false, ""
}

// preferences writes prompt/chosen/rejected pairs from sibling forks:
// for every step that sessions were forked from, the branches after it
// (the forked session's own continuation and each fork) that carry an
// outcome are paired, each better one with each worse one. The prompt is
// the conversation up to and including the fork point.
func (e *exporter) preferences(ctx context.Context, out io.Writer) (Summary, error) {
	f, err := e.scanForks(ctx, true)
	if err != nil {
		return e.sum, err
	}
	// Every selected session was looked at for its fork origin, which
	// is all a session that no one forked needs.
	e.sum.Sessions = e.total
	e.progress()
	bw := bufio.NewWriterSize(out, 1<<16)
	for _, k := range sortedKeys(f.groups) {
		if err := e.group(ctx, f.groups[k], bw); err != nil {
			return e.sum, err
		}
	}
	return e.finish(bw.Flush())
}

func (e *exporter) group(ctx context.Context, g *group, out io.Writer) error {
	point, err := e.ws.ReadStep(ctx, g.point.Session, g.point.Number)
	if err != nil {
		// The fork point's session is damaged there: its group has no
		// prompt, so no pairs.
		return e.unreadable(ctx, g.point.Session, err)
	}
	var branches []branch
	var prompt []cairn.Message
	var cut *Step // the prompt's oldest step, if its older history was pruned
	for _, name := range g.members {
		if !e.nameSelected(name) || e.isDamaged(name) {
			continue
		}
		h, err := e.head(ctx, name)
		if err != nil {
			if err = e.unreadable(ctx, name, err); err != nil {
				return err
			}
			continue
		}
		if h == nil || h.Number <= g.point.Number || !e.headSelected(h) {
			continue
		}
		t, err := e.load(ctx, h)
		if err != nil {
			if err = e.unreadable(ctx, name, err); err != nil {
				return err
			}
			continue
		}
		if !e.trajectorySelected(t) {
			continue
		}
		// The path must pass through the point (or a fork's copy of it).
		i := slices.IndexFunc(t.Steps, func(s Step) bool { return s.Number == g.point.Number })
		var after []Step
		switch {
		case i >= 0:
			if at := t.Steps[i]; at.ID != point.ID && (at.Origin == nil || !e.samePoint(ctx, *at.Origin, g.point)) {
				continue
			}
			after = t.Steps[i+1:]
		case !t.Truncated || t.Steps[0].Number <= g.point.Number:
			continue // the path does not pass through the point
		case t.Steps[0].Number == g.point.Number+1 && t.Steps[0].Parent != nil && e.isPoint(ctx, *t.Steps[0].Parent, point, g.point):
			// Pruned up to the point: what follows it is whole. Its
			// prompt comes from another path, or the point's own.
			after = t.Steps
		default:
			// Pruned past the point: part of the branch is gone.
			if _, ok, why := judge(t.Steps); ok || why != "" {
				e.sum.Skipped = addNote(e.sum.Skipped, reasonPrunedBranch, name,
					fmt.Sprintf("%s starts at %s, after the fork point %s", name, t.Steps[0].Step, refName(g.point)))
			}
			continue
		}
		score, ok, why := judge(after)
		if why != "" {
			e.sum.Skipped = addNote(e.sum.Skipped, reasonUnranked, name, why)
		}
		if !ok {
			continue
		}
		// Its messages are read as the chat formats read them: a record
		// of the wrong shape, or a tool result before its call, leaves a
		// hole, so the branch is not paired.
		var v verdict
		msgs := chatMessages(t, &v)
		if v.skip == reasonBroken || v.skip == reasonResultWithoutCall || v.skip == reasonUnansweredCall {
			e.sum.Skipped = addNote(e.sum.Skipped, v.skip, name, v.example[v.skip])
			continue
		}
		raw := ""
		if slices.Contains(v.leftOut, reasonRawLeftOut) {
			raw = firstRaw(t.Steps)
		}
		// The branch's messages are what follows the prompt's in the
		// conversation as the chat formats read it (its last assistant
		// message cut if its calls went unanswered).
		prefix := min(len(messagesOf(t.Steps[:len(t.Steps)-len(after)])), len(msgs))
		unanswered := ""
		if slices.Contains(v.leftOut, reasonUnansweredLast) {
			unanswered = v.example[reasonUnansweredLast]
		}
		// The prompt is the path up to the point; a path whose older
		// history was pruned gives it only if no whole one does.
		if i >= 0 && (prompt == nil || (cut != nil && !t.Truncated)) {
			prompt, cut = messagesOf(t.Steps[:i+1]), nil
			if t.Truncated {
				cut = &t.Steps[0]
			}
		}
		if !slices.ContainsFunc(msgs[prefix:], func(m cairn.Message) bool { return m.Role == "assistant" }) {
			// A judged branch that adds no answer of the model's (a
			// verdict alone, a user's message) has nothing to prefer.
			e.sum.Skipped = addNote(e.sum.Skipped, reasonNoBranchAnswer, name, fmt.Sprintf("%s after the fork point %s", name, refName(g.point)))
			continue
		}
		branches = append(branches, branch{head: h, msgs: msgs[prefix:], steps: after, score: score, raw: raw, unanswered: unanswered, unpaired: t.unpaired})
	}
	if prompt == nil && len(branches) > 1 {
		// Every branch was pruned up to the point: the prompt is the
		// point's own path.
		t, err := e.load(ctx, point)
		if err != nil {
			return e.unreadable(ctx, g.point.Session, err)
		}
		prompt = messagesOf(t.Steps)
		if t.Truncated {
			cut = &t.Steps[0]
		}
	}
	var used = map[int]bool{}
	for i, a := range branches {
		for j, b := range branches {
			if a.score <= b.score || len(a.msgs) == 0 || len(b.msgs) == 0 {
				continue
			}
			if err := writeLine(out, preferencePair{Prompt: openAIMessages(prompt),
				Chosen: openAIMessages(a.msgs), Rejected: openAIMessages(b.msgs)}); err != nil {
				return err
			}
			e.sum.Pairs++
			used[i], used[j] = true, true
		}
	}
	for i, b := range branches {
		if used[i] {
			if cut != nil {
				e.sum.LeftOut = addNote(e.sum.LeftOut, reasonPrunedPrompt, b.head.Session,
					fmt.Sprintf("the prompt starts at %s", cut.Step))
			}
			if b.raw != "" {
				e.sum.LeftOut = addNote(e.sum.LeftOut, reasonRawLeftOut, b.head.Session, b.raw)
			}
			if b.unanswered != "" {
				e.sum.LeftOut = addNote(e.sum.LeftOut, reasonUnansweredLast, b.head.Session, b.unanswered)
			}
			if b.unpaired != "" {
				e.sum.LeftOut = addNote(e.sum.LeftOut, reasonUnpairedResult, b.head.Session, b.unpaired)
			}
			e.count(b.steps)
			if err := e.reportHead(ManifestHead{StepRef: headRef(b.head)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// firstRaw names the first step of steps whose record is raw (not
// following the convention), or "".
func firstRaw(steps []Step) string {
	for _, s := range steps {
		if s.Rec == nil && s.Broken == nil && len(s.Record) > 0 {
			return s.String()
		}
	}
	return ""
}

// isPoint reports whether ref names the fork point: its step, or a
// fork's copy of it.
func (e *exporter) isPoint(ctx context.Context, ref cairn.StepRef, point *cairn.Step, p cairn.StepRef) bool {
	return ref.ID == point.ID.String() || e.samePoint(ctx, ref, p)
}

// samePoint reports whether origin resolves to point.
func (e *exporter) samePoint(ctx context.Context, origin, point cairn.StepRef) bool {
	p, err := e.resolvePoint(ctx, origin)
	return err == nil && p == point
}
