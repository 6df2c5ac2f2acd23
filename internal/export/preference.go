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

// branch is one sibling after a fork point.
type branch struct {
	head  *cairn.Step
	msgs  messages
	steps int   // its steps after the point
	raws  int64 // of them, those whose record does not follow the convention
	score float64
	// raw is set if the branch's path holds raw records, left out of
	// its messages: the first of them, to note.
	raw string
	// ownPrompt is set if the branch's path holds the prompt (the fork
	// point): else its raw records are only those after the point, and
	// the prompt's, read from another path, are noted for it too.
	ownPrompt bool
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
		if score, ok, why, given := judgeStep(steps[i]); given {
			return score, ok, why
		}
	}
	return 0, false, ""
}

// judgeStep is judge of one step; given is false if its record carries
// no outcome or reward.
func judgeStep(s Step) (score float64, ok bool, why string, given bool) {
	j := judgementOf(s)
	switch {
	case j.unread:
		return 0, false, unreadAt(s), true
	case j.hasReward:
		return *j.reward, true, "", true
	case j.hasOutcome:
		if s, known := outcomeScores[strings.ToLower(j.outcome)]; known {
			return s, true, "", true
		}
		return 0, false, fmt.Sprintf("%s: outcome %q", s.Step, j.outcome), true
	}
	return 0, false, "", false
}

// preferences writes prompt/chosen/rejected pairs from sibling forks:
// for every step that sessions were forked from, the branches after it
// (the forked session's own continuation and each fork) that carry an
// outcome are paired, each better one with each worse one. The prompt is
// the conversation up to and including the fork point. A branch too long
// to hold (long.go) is read once more, a run of steps at a time, to learn
// what group needs of it (branchPath), and its messages are read again
// each time a pair of it is written, so what a group holds is flat in
// its branches' lengths.
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
	for _, name := range f.collected {
		if err := e.collected(ctx, name); err != nil {
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
	var prompt *messages
	var cut *cairn.Step  // the prompt's oldest step, if its older history was pruned
	var promptRaw string // the prompt's first raw record, left out of it
	// The point's own path, read once if a branch or the prompt needs it
	// (pointPathOf).
	var pp *pointPath
	pointPathOf := func() (*pointPath, error) {
		if pp != nil {
			return pp, nil
		}
		t, err := e.load(ctx, point)
		if err != nil {
			return nil, err
		}
		c, raw, err := checkPath(t)
		if err != nil {
			return nil, err
		}
		pp = &pointPath{t: t, check: c, raw: raw}
		return pp, nil
	}
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
		p, err := branchPathOf(t, g.point.Number)
		if err != nil {
			if err = e.unreadable(ctx, name, err); err != nil {
				return err
			}
			continue
		}
		// The path must pass through the point (or a fork's copy of it).
		first := t.first()
		switch {
		case p.at != nil:
			if p.at.ID != point.ID && (p.at.Origin == nil || !e.samePoint(ctx, *p.at.Origin, g.point)) {
				continue
			}
		case !t.Truncated || first.Number <= g.point.Number:
			continue // the path does not pass through the point
		case first.Number == g.point.Number+1 && first.Parent != nil && e.isPoint(ctx, *first.Parent, point, g.point):
			// Pruned up to the point: what follows it is whole. Its
			// prompt comes from another path, or the point's own, and
			// its messages are checked as what follows that prompt, as
			// an unpruned branch's path is: a tool result answering the
			// prompt's last call follows that call, and a hole in the
			// prompt is one in the branch.
			pp, err := pointPathOf()
			if err != nil {
				return e.unreadable(ctx, g.point.Session, err)
			}
			if p, err = branchPathAfter(t, g.point.Number, pp.check); err != nil {
				if err = e.unreadable(ctx, name, err); err != nil {
					return err
				}
				continue
			}
		default:
			// Pruned past the point: part of the branch is gone.
			if p.judged || p.why != "" {
				e.sum.Skipped = addNote(e.sum.Skipped, reasonPrunedBranch, name,
					fmt.Sprintf("%s starts at %s, after the fork point %s", name, first, refName(g.point)))
			}
			continue
		}
		if p.why != "" {
			e.sum.Skipped = addNote(e.sum.Skipped, reasonUnranked, name, p.why)
		}
		if !p.judged {
			continue
		}
		// Its messages are read as the chat formats read them: a record
		// of the wrong shape, or a tool result before its call, leaves a
		// hole, so the branch is not paired.
		v := p.v
		if holed(v) {
			e.sum.Skipped = addNote(e.sum.Skipped, v.skip, name, v.example[v.skip])
			continue
		}
		// A pair is in OpenAI's format (its DPO format, as TRL's), which
		// refuses a function name it does not allow, in the prompt or an
		// answer.
		if p.badName != "" {
			e.sum.Skipped = addNote(e.sum.Skipped, reasonToolName, name, p.badName)
			continue
		}
		raw := ""
		if slices.Contains(v.leftOut, reasonRawLeftOut) {
			raw = p.raw
		}
		unanswered := ""
		if slices.Contains(v.leftOut, reasonUnansweredLast) {
			unanswered = v.example[reasonUnansweredLast]
		}
		// The prompt is the path up to the point; a path whose older
		// history was pruned gives it only if no whole one does.
		if p.at != nil && (prompt == nil || (cut != nil && !t.Truncated)) {
			prompt, cut, promptRaw = &p.prompt, nil, p.promptRaw
			if t.Truncated {
				cut = first
			}
		}
		if !p.answer {
			// A judged branch that adds no answer of the model's (a
			// verdict alone, a user's message) has nothing to prefer.
			e.sum.Skipped = addNote(e.sum.Skipped, reasonNoBranchAnswer, name, fmt.Sprintf("%s after the fork point %s", name, refName(g.point)))
			continue
		}
		branches = append(branches, branch{head: h, msgs: p.branch, steps: p.steps, raws: p.raws, score: p.score,
			raw: raw, ownPrompt: p.at != nil, unanswered: unanswered, unpaired: t.unpaired})
	}
	if prompt == nil && len(branches) > 1 {
		// Every branch was pruned up to the point: the prompt is the
		// point's own path, whose messages each branch's check saw.
		pp, err := pointPathOf()
		if err != nil {
			return e.unreadable(ctx, g.point.Session, err)
		}
		t := pp.t
		prompt = &messages{held: messagesOf(t.Steps)}
		if l := t.long; l != nil {
			prompt = &messages{long: l, to: l.msgs}
		}
		if t.Truncated {
			cut = t.first()
		}
		promptRaw = pp.raw
	}
	var used = map[int]bool{}
	for i, a := range branches {
		for j, b := range branches {
			if a.score <= b.score || a.msgs.len() == 0 || b.msgs.len() == 0 {
				continue
			}
			if err := writePair(out, *prompt, a.msgs, b.msgs); err != nil {
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
					fmt.Sprintf("the prompt starts at %s", cut))
			}
			raw := b.raw
			if !b.ownPrompt && promptRaw != "" {
				raw = promptRaw // the pair's first
			}
			if raw != "" {
				e.sum.LeftOut = addNote(e.sum.LeftOut, reasonRawLeftOut, b.head.Session, raw)
			}
			if b.unanswered != "" {
				e.sum.LeftOut = addNote(e.sum.LeftOut, reasonUnansweredLast, b.head.Session, b.unanswered)
			}
			if b.unpaired != "" {
				e.sum.LeftOut = addNote(e.sum.LeftOut, reasonUnpairedResult, b.head.Session, b.unpaired)
			}
			e.counted(b.steps, b.raws)
			if err := e.reportHead(ManifestHead{StepRef: headRef(b.head)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// collected names session name among the skipped if it is judged: its
// history was pruned and gc has collected the step right below its
// oldest since. A fork pruned up to its fork point keeps no other trace
// of where it was forked (the collected step was its copy of the point):
// if it is one, its branch cannot be grouped, so it is not paired. A
// session that carries no outcome or reward would be no branch anyway.
func (e *exporter) collected(ctx context.Context, name string) error {
	if !e.nameSelected(name) || e.isDamaged(name) {
		return nil
	}
	h, err := e.head(ctx, name)
	if err != nil {
		return e.unreadable(ctx, name, err)
	}
	if h == nil || !e.headSelected(h) {
		return nil
	}
	t, err := e.load(ctx, h)
	if err != nil {
		return e.unreadable(ctx, name, err)
	}
	first := t.first()
	if !e.trajectorySelected(t) || first.Parent == nil {
		return nil
	}
	p, err := branchPathOf(t, first.Number-1)
	if err != nil {
		return e.unreadable(ctx, name, err)
	}
	if p.judged || p.why != "" {
		e.sum.Skipped = addNote(e.sum.Skipped, reasonForkCollected, name,
			fmt.Sprintf("%s starts at %s; %s before it was collected", name, first, refName(*first.Parent)))
	}
	return nil
}

// writePair writes one line of TRL's conversational preference format,
// {"prompt":[…],"chosen":[…],"rejected":[…]} of OpenAI chat messages
// (openAIMessages) in compact JSON, a message at a time: a long
// trajectory's messages are read again as they are written.
func writePair(out io.Writer, prompt, chosen, rejected messages) error {
	for _, part := range []struct {
		key  string
		msgs messages
	}{{`{"prompt":[`, prompt}, {`],"chosen":[`, chosen}, {`],"rejected":[`, rejected}} {
		if _, err := io.WriteString(out, part.key); err != nil {
			return err
		}
		n := 0
		err := part.msgs.each(func(m cairn.Message) error {
			if n > 0 {
				if _, err := io.WriteString(out, ","); err != nil {
					return err
				}
			}
			n++
			b, err := textJSON(openAIMessages([]cairn.Message{m})[0])
			if err != nil {
				return err
			}
			_, err = out.Write(b)
			return err
		})
		if err != nil {
			return err
		}
	}
	_, err := io.WriteString(out, "]}\n")
	return err
}

// messages are a run of a path's settled messages: held, or the ones
// numbered from to to (not included) of a path too long to hold, read
// again (long.go).
type messages struct {
	held     []cairn.Message
	long     *longPath
	from, to int
}

func (m messages) len() int {
	if m.long == nil {
		return len(m.held)
	}
	return m.to - m.from
}

// each calls fn with each message, in order.
func (m messages) each(fn func(cairn.Message) error) error {
	if m.long != nil {
		return m.long.eachKept(m.from, m.to, fn)
	}
	for _, msg := range m.held {
		if err := fn(msg); err != nil {
			return err
		}
	}
	return nil
}

// branchPath is what group reads of a branch's path, held or too long
// to hold: the steps after the fork point are those numbered after it
// (a path's numbers rise by one a step, a fork's first step copying the
// point's).
type branchPath struct {
	at *cairn.Step // the path's step numbered as the point, if any
	// score, judged and why are judge's of the steps after the point.
	score  float64
	judged bool
	why    string
	v      verdict // chatMessages's
	// prompt holds the messages up to the point, branch the messages
	// the chat formats read after them; answer is set if one of those is
	// the assistant's.
	prompt, branch messages
	answer         bool
	raw            string // firstRaw's
	promptRaw      string // firstRaw's of the steps up to the point
	// badName says where the first tool call of prompt or branch is
	// whose function name OpenAI's format refuses (chatCheck.badCall).
	badName string
	steps   int   // after the point
	raws    int64 // of them, raw records
}

// branchPathOf reads t as group does: a held path at once, a path too
// long to hold through its steps, settled, once more.
func branchPathOf(t *Trajectory, point uint64) (*branchPath, error) {
	return branchPathAfter(t, point, nil)
}

// branchPathAfter is branchPathOf of t, a path pruned up to the point,
// as what follows the messages prompt checked (the point's path,
// checkPath): its check goes on from there, so that it says what that of
// the whole path would. A nil prompt checks t alone.
func branchPathAfter(t *Trajectory, point uint64, prompt *chatCheck) (*branchPath, error) {
	p := &branchPath{}
	if l := t.long; l != nil {
		var err error
		t.unpaired, err = p.readLong(l, point, prompt)
		return p, err
	}
	j := slices.IndexFunc(t.Steps, func(s Step) bool { return s.Number > point })
	if j < 0 {
		j = len(t.Steps)
	}
	if j > 0 && t.Steps[j-1].Number == point {
		p.at = t.Steps[j-1].Step
	}
	after := t.Steps[j:]
	p.score, p.judged, p.why = judge(after)
	c, shown := checkFrom(prompt, t.fromState)
	for _, s := range t.Steps {
		c.add(s)
	}
	keep, _ := c.chatVerdict(&p.v)
	before := messagesOf(t.Steps[:j])
	p.badName = c.badCallBefore(max(shown+len(before), keep))
	msgs := messagesOf(t.Steps)[:max(keep-shown, 0)]
	prefix := min(len(before), len(msgs))
	p.prompt, p.branch = messages{held: before}, messages{held: msgs[prefix:]}
	p.answer = slices.ContainsFunc(msgs[prefix:], func(m cairn.Message) bool { return m.Role == "assistant" })
	p.raw, p.promptRaw = firstRaw(t.Steps), firstRaw(t.Steps[:j])
	p.steps = len(after)
	for _, s := range after {
		if s.Rec == nil && len(s.Record) > 0 {
			p.raws++
		}
	}
	return p, nil
}

// readLong reads l as branchPathOf reads a held path, its steps one at
// a time: its messages are read again when written. unpaired is
// settleCallIDs's.
func (p *branchPath) readLong(l *longPath, point uint64, prompt *chatCheck) (unpaired string, err error) {
	c, shown := checkFrom(prompt, l.adapter != nil)
	k, before, answer := 0, 0, -1
	unpaired, err = l.eachSettled(func(s Step) error {
		c.add(s)
		if p.raw == "" && rawRecord(s) {
			p.raw = s.String()
			if s.Number <= point {
				p.promptRaw = p.raw
			}
		}
		if s.Number == point {
			p.at = s.Step
		}
		if s.Rec != nil {
			for _, m := range s.Rec.Messages {
				if s.Number > point && m.Role == "assistant" && answer < 0 {
					answer = k
				}
				k++
			}
		}
		if s.Number <= point {
			before = k
			return nil
		}
		if score, ok, why, given := judgeStep(s); given {
			p.score, p.judged, p.why = score, ok, why
		}
		p.steps++
		if s.Rec == nil && len(s.Record) > 0 {
			p.raws++
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	keep, _ := c.chatVerdict(&p.v)
	p.badName = c.badCallBefore(max(shown+before, keep))
	keep = max(keep-shown, 0)
	prefix := min(before, keep)
	p.prompt = messages{long: l, to: before}
	p.branch = messages{long: l, from: prefix, to: keep}
	p.answer = answer >= prefix && answer < keep
	return unpaired, nil
}

// holed reports whether v, a path's chatVerdict, says its messages
// cannot be read whole: a record of the wrong shape, a tool result that
// follows no call, a call left unanswered before the conversation goes
// on. A preference branch whose path (or prompt) is one is not paired.
func holed(v verdict) bool {
	return v.skip == reasonBroken || v.skip == reasonResultWithoutCall || v.skip == reasonUnansweredCall
}

// pointPath is the fork point's own path, as group reads it.
type pointPath struct {
	t     *Trajectory
	check *chatCheck // checkPath's of t
	raw   string     // its first raw record
}

// checkPath returns the check of t's conversation (chatCheck), reading
// a path too long to hold once more, and its first raw record.
func checkPath(t *Trajectory) (c *chatCheck, raw string, err error) {
	l := t.long
	if l == nil {
		return checkHeld(t), firstRaw(t.Steps), nil
	}
	c = newChatCheck(l.adapter != nil)
	_, err = l.eachSettled(func(s Step) error {
		c.add(s)
		if raw == "" && rawRecord(s) {
			raw = s.String()
		}
		return nil
	})
	return c, raw, err
}

// checkFrom returns a check that goes on from prompt's (a copy of it),
// and the messages prompt saw; a new check if prompt is nil.
func checkFrom(prompt *chatCheck, fromState bool) (*chatCheck, int) {
	if prompt == nil {
		return newChatCheck(fromState), 0
	}
	return prompt.clone(), prompt.n
}

// firstRaw names the first step of steps whose record is raw (not
// following the convention), or "".
func firstRaw(steps []Step) string {
	for _, s := range steps {
		if rawRecord(s) {
			return s.String()
		}
	}
	return ""
}

// rawRecord reports whether s's record is raw: it neither follows the
// convention nor breaks it.
func rawRecord(s Step) bool { return s.Rec == nil && s.Broken == nil && len(s.Record) > 0 }

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
