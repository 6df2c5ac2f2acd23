// Package export turns a workspace's sessions into training data:
// chat-format JSONL (OpenAI, ShareGPT), ATIF documents, a Parquet table
// of steps, and TRL preference pairs from sibling forks.
//
// A trajectory is one root-to-leaf path of the step tree: a session's
// head followed back through its parents, across the forks it came from.
// Export streams: it holds one trajectory (or one group of sibling
// forks, for preference pairs) at a time, plus, when leaves or
// preference pairs are asked for, one small entry per forked session.
package export

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
)

// Formats.
const (
	OpenAIJSONL = "openai-jsonl"
	ATIF        = "atif"
	ShareGPT    = "sharegpt"
	Parquet     = "parquet"
	Preference  = "preference"
)

// Formats lists every format, for usage messages.
var Formats = []string{OpenAIJSONL, ATIF, ShareGPT, Parquet, Preference}

// Branch modes.
const (
	// Leaves exports one trajectory per leaf: sessions whose head no
	// other session was forked from.
	Leaves = "leaves"
	// All exports every selected session's trajectory, also those that
	// are a prefix of a fork's.
	All = "all"
)

// Options select what to export and how.
type Options struct {
	Format string
	// WholeLines makes out receive whole lines only (every format but
	// Parquet): a line is built, in memory up to 4 MiB and beyond that
	// in a temporary file, before any of it is written, so an export
	// that fails part-way through a long trajectory's line (the store
	// changed between its two reads) leaves only whole lines on an
	// output that cannot be taken back, such as stdout.
	WholeLines bool
	// Sessions are glob patterns (path.Match) on session names; a
	// session is selected if it matches any (none: all sessions).
	Sessions []string
	// Labels must all be present, with these values, among the
	// trajectory's merged labels. The key "outcome" is matched as
	// Outcome is: against the trajectory's outcome, which is the newest
	// record's outcome field, else its labels.outcome.
	Labels map[string]string
	// Outcome, if set, is the outcome the trajectory must have (see
	// Trajectory.Outcome); success also matches its synonyms pass,
	// passed, … and failure fail, failed, … (see docs/records.md).
	Outcome string
	// MinReward and MaxReward, if set, bound the trajectory's reward
	// (MinReward <= reward <= MaxReward); a trajectory without a reward
	// is then not selected.
	MinReward, MaxReward *float64
	// NoMetadata leaves the metadata object out of openai-jsonl and
	// sharegpt lines (for uploaders that refuse keys they do not know).
	NoMetadata bool
	// Status, if set, is the status the session's head must have.
	Status *cairn.Status
	// Since and Until, if not zero, bound the time of the session's head:
	// Since <= time < Until.
	Since, Until time.Time
	// Branches is Leaves (default) or All.
	Branches string
	// Progress, if set, is called after each session.
	Progress func(Progress)
	// FromHeads, if set, replaces every selector: it yields the heads of
	// an earlier export (ReadManifestHeads) and exactly their trajectories
	// are exported again, in that order.
	FromHeads func(ctx context.Context, yield func(ManifestHead) error) error
	// Workers is how many sessions are read at a time (default 16).
	Workers int
	// ReadAheadBytes bounds the bytes of steps read ahead of the writer
	// (default 32 MiB); a single trajectory larger than it is still read.
	ReadAheadBytes int64
	// Head, if set, is called for every session whose head an exported
	// trajectory or pair ends at (for the export manifest).
	Head func(ManifestHead) error
}

// Progress is how far an export has got.
type Progress struct {
	Sessions     int // sessions looked at (see Summary.Sessions)
	Total        int // sessions to look at, once known (0 before)
	Trajectories int64
	Steps        int64
}

// Summary counts what an export wrote.
type Summary struct {
	// Sessions counts the sessions the export looked at: those the
	// --session globs select (every session without them), each once,
	// whether or not a trajectory or pair came of them; with FromHeads,
	// the heads re-exported.
	Sessions     int   `json:"sessions_scanned"`
	Trajectories int64 `json:"trajectories"`
	Steps        int64 `json:"steps"`
	// RawRecords counts steps whose record does not follow the
	// convention (exported as raw JSON where the format has room).
	RawRecords int64 `json:"raw_records"`
	// Pairs counts preference pairs.
	Pairs int64 `json:"pairs,omitempty"`
	// Skipped lists, by reason, the selected trajectories the format
	// could not write.
	Skipped []Note `json:"skipped,omitempty"`
	// LeftOut lists, by reason, what written trajectories lost.
	LeftOut []Note `json:"left_out,omitempty"`
	// Unmatched lists the --session globs (Options.Sessions) that no
	// session of the store matches: a name mistyped, most likely.
	Unmatched []string `json:"unmatched_session_globs,omitempty"`
	// Unreadable names the sessions that could not be read because the
	// store is damaged there (a corrupt step object, a damaged base
	// marker): the export went on without them, and Export returned a
	// *cairn.UnreadableError.
	Unreadable []Note `json:"unreadable,omitempty"`
}

// reasonUnreadable is Summary.Unreadable's reason.
const reasonUnreadable = "damage in the store, so not read (cairn verify names the damaged objects)"

// Step is one step of a trajectory with its parsed record.
type Step struct {
	*cairn.Step
	// Rec is the record parsed by the convention; nil if the step has no
	// record or it does not follow the convention (see Step.Record).
	Rec *cairn.Record
	// Broken, if set, says how a record that uses the convention's keys
	// breaks it (Rec is then nil); a record that does not use them at
	// all leaves Broken nil.
	Broken error
	// renamed maps the id export gives a tool call of the step in
	// place of the agent's, which another call of the trajectory has
	// (settleCallIDs), to the agent's id.
	renamed map[string]string
}

// Trajectory is one root-to-leaf path, oldest step first.
type Trajectory struct {
	// Session is the session whose head ends the path.
	Session string
	Steps   []Step
	// Labels are the steps' labels merged, newer steps winning.
	Labels map[string]string
	// Outcome is the newest outcome on the path: a record's outcome
	// field, else its labels.outcome ("" if none).
	Outcome string
	// Reward is the newest reward on the path (nil if none).
	Reward *float64
	// Truncated is true if the path's older steps were pruned away
	// (cairn prune): it starts part-way, not at the session's first step.
	Truncated bool
	// fromState is set if the trajectory's conversation was read from a
	// framework adapter's states (see fromstate.go), not its records.
	fromState bool
	// Unjudged, if set, says which step's record carries the newest
	// outcome or reward in a form export cannot read (a record of the
	// wrong shape), and how it breaks the convention: Outcome or Reward
	// is then left unset rather than taken from an older step.
	Unjudged string
	// unpaired, if set, says where the first tool result without a
	// tool_call_id is that no call could be found for (settleCallIDs).
	unpaired string
	// long, if set, is the path of a trajectory too long to hold
	// (long.go): Steps is then empty, and the writer reads it.
	long *longPath
}

// judgement is what one step's record says of its trajectory.
type judgement struct {
	outcome string   // the outcome field, else labels.outcome
	reward  *float64 // the reward
	// hasOutcome and hasReward report whether the record gives an
	// outcome or a reward at all; unread, that it gives one in a record
	// of the wrong shape, so neither can be read.
	hasOutcome, hasReward, unread bool
}

// unreadAt says where step s's record breaks the convention, and how.
func unreadAt(s Step) string { return fmt.Sprintf("%s: %v", s.Step, s.Broken) }

// judgementOf returns what step s's record says of its trajectory.
func judgementOf(s Step) judgement {
	if r := s.Rec; r != nil {
		o := r.Outcome
		if o == "" {
			o = r.Labels["outcome"]
		}
		return judgement{outcome: o, reward: r.Reward, hasOutcome: o != "", hasReward: r.Reward != nil}
	}
	if s.Broken == nil {
		return judgement{}
	}
	// The record breaks the convention: whatever it says of the
	// outcome or reward is unreadable, but it does say something.
	var keys struct {
		Outcome, Reward json.RawMessage
		Labels          map[string]json.RawMessage
	}
	_ = json.Unmarshal(s.Record, &keys)
	given := func(v json.RawMessage) bool { return len(v) > 0 && string(v) != "null" }
	j := judgement{hasOutcome: given(keys.Outcome) || given(keys.Labels["outcome"]), hasReward: given(keys.Reward)}
	j.unread = j.hasOutcome || j.hasReward
	return j
}

// Head returns the trajectory's last step.
func (t *Trajectory) Head() *cairn.Step {
	if t.long != nil {
		return t.long.head
	}
	return t.Steps[len(t.Steps)-1].Step
}

// first returns the trajectory's first step.
func (t *Trajectory) first() *cairn.Step {
	if t.long != nil {
		return t.long.first
	}
	return t.Steps[0].Step
}

// steps counts the trajectory's steps.
func (t *Trajectory) steps() int {
	if t.long != nil {
		return t.long.n
	}
	return len(t.Steps)
}

// writer is one output format over trajectories.
type writer interface {
	// Write writes t, or says why it could not (verdict.skip), and what
	// the format left out of it.
	Write(t *Trajectory) (verdict, error)
	Close() error
}

func newWriter(format string, out io.Writer, meta bool) (writer, error) {
	switch format {
	case OpenAIJSONL:
		return &jsonlWriter{out: out, line: openAILine, meta: meta, long: (*jsonlWriter).writeOpenAILong}, nil
	case ShareGPT:
		return &jsonlWriter{out: out, line: shareGPTLine, meta: meta, long: (*jsonlWriter).writeShareGPTLong}, nil
	case ATIF:
		return &jsonlWriter{out: out, line: atifLine, long: (*jsonlWriter).writeATIFLong}, nil
	case Parquet:
		return newParquetWriter(out), nil
	}
	return nil, fmt.Errorf("unknown export format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

// Validate checks the options without touching a store.
func (o *Options) Validate() error {
	if !slices.Contains(Formats, o.Format) {
		return fmt.Errorf("unknown --format %q (want one of %s)", o.Format, strings.Join(Formats, ", "))
	}
	for _, g := range o.Sessions {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("--session %q: not a glob (a [ needs its closing ], and a \\ the character it escapes)", g)
		}
	}
	switch o.Branches {
	case "", Leaves, All:
	default:
		return fmt.Errorf("unknown --branches %q (want leaves or all)", o.Branches)
	}
	if o.MinReward != nil && o.MaxReward != nil && *o.MinReward > *o.MaxReward {
		return fmt.Errorf("--min-reward %g is above --max-reward %g: nothing can be selected", *o.MinReward, *o.MaxReward)
	}
	if !o.Since.IsZero() && !o.Until.IsZero() && !o.Since.Before(o.Until) {
		return fmt.Errorf("--since %s is not before --until %s: nothing can be selected (since <= time < until)",
			o.Since.Format(time.RFC3339Nano), o.Until.Format(time.RFC3339Nano))
	}
	if want, ok := o.Labels["outcome"]; ok && o.Outcome != "" && !sameOutcome(want, o.Outcome) {
		return fmt.Errorf("--label outcome=%s and --outcome %s contradict each other: nothing can be selected", want, o.Outcome)
	}
	return nil
}

// Export writes the selected trajectories of ws to out in opts.Format.
// A session the store holds damaged (cairn.ErrCorrupt) is passed over,
// not the end of the export: the rest is written, and Export then
// returns a *cairn.UnreadableError naming the sessions it could not read
// (also in Summary.Unreadable). With opts.FromHeads, which re-exports
// exactly, such a session fails the export.
func Export(ctx context.Context, ws *cairn.Workspace, out io.Writer, opts Options) (Summary, error) {
	if err := opts.Validate(); err != nil {
		return Summary{}, err
	}
	e := &exporter{ws: ws, opts: opts}
	if opts.WholeLines && opts.Format != Parquet {
		g := newLineGate(out)
		sum, err := e.export(ctx, g)
		if cerr := g.close(); err == nil && cerr != nil {
			err = cerr // never: every line the formats write ends
		}
		return sum, err
	}
	return e.export(ctx, out)
}

func (e *exporter) export(ctx context.Context, out io.Writer) (Summary, error) {
	opts := e.opts
	if opts.Format == Preference {
		if opts.FromHeads != nil {
			return Summary{}, fmt.Errorf("preference pairs cannot be re-exported from an export manifest's heads")
		}
		return e.preferences(ctx, out)
	}
	w, err := newWriter(opts.Format, out, !opts.NoMetadata)
	if err != nil {
		return Summary{}, err
	}
	if opts.FromHeads != nil {
		err = e.fromHeads(ctx, w)
	} else {
		err = e.trajectories(ctx, w)
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return e.finish(err)
}

// finish returns the summary and err, or, if err is nil and sessions
// could not be read, a *cairn.UnreadableError naming them.
func (e *exporter) finish(err error) (Summary, error) {
	if e.opts.FromHeads == nil {
		for _, g := range e.opts.Sessions {
			if !e.matched[g] && !slices.Contains(e.sum.Unmatched, g) {
				e.sum.Unmatched = append(e.sum.Unmatched, g)
			}
		}
	}
	if len(e.damaged) == 0 {
		return e.sum, err
	}
	ue := &cairn.UnreadableError{Sessions: sortedKeys(e.damaged)}
	for _, name := range ue.Sessions {
		ue.Errs = append(ue.Errs, e.damaged[name])
	}
	e.sum.Unreadable = []Note{{Reason: reasonUnreadable, Sessions: int64(len(ue.Sessions)),
		Names: ue.Sessions[:min(len(ue.Sessions), MaxNoteNames)], Example: ue.Errs[0].Error()}}
	if err == nil {
		err = ue
	}
	return e.sum, err
}

type exporter struct {
	ws    *cairn.Workspace
	opts  Options
	sum   Summary
	total int

	mu      sync.Mutex
	matched map[string]bool          // the --session globs some session matched
	damaged map[string]error         // sessions not read: the store is damaged there
	points  map[string]cairn.StepRef // fork origins resolved (refKey) to the step they copy
}

// unreadable sets session name aside if err says the store is damaged
// there (cairn.ErrCorrupt, or a link or the like that a local store found
// where an object of the session belongs, cas.NotObjectError): the export
// goes on without it, and names it at the end, as cairn sessions does
// (Workspace.EachHead). Any other error is returned.
func (e *exporter) unreadable(ctx context.Context, name string, err error) error {
	var ne *cas.NotObjectError
	if err == nil || !errors.Is(err, cairn.ErrCorrupt) && !errors.As(err, &ne) || ctx.Err() != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.damaged == nil {
		e.damaged = map[string]error{}
	}
	if _, seen := e.damaged[name]; !seen {
		e.damaged[name] = err
	}
	return nil
}

// isDamaged reports whether session name was set aside by unreadable.
func (e *exporter) isDamaged(name string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.damaged[name]
	return ok
}

func (e *exporter) progress() {
	if e.opts.Progress != nil {
		e.opts.Progress(Progress{Sessions: e.sum.Sessions, Total: e.total,
			Trajectories: e.sum.Trajectories, Steps: e.sum.Steps})
	}
}

func refKey(r cairn.StepRef) string { return fmt.Sprintf("%s@%d#%s", r.Session, r.Number, r.ID) }

func headRef(st *cairn.Step) cairn.StepRef {
	return cairn.StepRef{Session: st.Session, Number: st.Number, ID: st.ID.String()}
}

// forks is what a scan of every session's fork origin found.
type forks struct {
	// forkedAt holds the steps some session was forked from.
	forkedAt map[string]bool
	// groups maps a fork point (resolved through forks of forks) to the
	// sessions branching there, the point's own session first.
	groups map[string]*group
	// collected are the sessions (in order) whose history was pruned
	// and whose step right below its oldest gc has collected since
	// (found.collected): with groups only.
	collected []string
}

type group struct {
	point   cairn.StepRef
	members []string
}

// scanForks reads every session's fork origin: one LIST and one GET per
// session, keeping an entry only for forked ones.
func (e *exporter) scanForks(ctx context.Context, withGroups bool) (*forks, error) {
	f := &forks{forkedAt: map[string]bool{}, groups: map[string]*group{}}
	n := 0
	err := ordered(ctx, e.workers(), e.readAhead(), e.ws.EachSession, func(ctx context.Context, name string) (found, error) {
		r, err := e.forkOf(ctx, name, withGroups)
		if err = e.unreadable(ctx, name, err); err != nil || e.isDamaged(name) {
			return found{name: name}, err
		}
		return r, nil
	}, func(r found) error {
		if e.nameSelected(r.name) {
			n++
		}
		if r.collected {
			f.collected = append(f.collected, r.name)
		}
		if r.origin == nil {
			return nil
		}
		f.forkedAt[refKey(*r.origin)] = true
		if r.point == nil {
			return nil
		}
		k := refKey(*r.point)
		g := f.groups[k]
		if g == nil {
			g = &group{point: *r.point, members: []string{r.point.Session}}
			f.groups[k] = g
		}
		if !slices.Contains(g.members, r.name) {
			g.members = append(g.members, r.name)
		}
		return nil
	})
	e.total = n
	return f, err
}

// found is what scanForks finds of one session: its fork origin, if it
// is a live fork, and with groups the point that origin resolves to.
type found struct {
	name          string
	origin, point *cairn.StepRef
	// collected is set if the session's history was pruned and the step
	// right below its oldest, which a fork's copy of its origin may have
	// been, is collected (prunedCopyOrigin).
	collected bool
}

// forkOf reads session name's fork origin for scanForks.
func (e *exporter) forkOf(ctx context.Context, name string, withGroups bool) (found, error) {
	if withGroups {
		return e.branchOf(ctx, name)
	}
	origin, err := e.ws.ForkOrigin(ctx, name)
	if errors.Is(err, cairn.ErrNotFound) {
		// Listed, but no step stored (marked and never committed, or
		// swept since the listing): no fork.
		return found{name: name}, nil
	}
	if err != nil || origin == nil {
		return found{name: name}, err
	}
	// A removed fork continues nothing: the session it was forked
	// from is a leaf again (and no preference branch).
	if h, err := e.head(ctx, name); err != nil || h == nil {
		return found{name: name}, err
	}
	// Nor does a fork whose name was used again after it was
	// removed: its old first step, not yet swept, is no longer in
	// its history (the copy of the origin has the origin's number).
	if live, err := e.live(ctx, name, origin.Number); err != nil || !live {
		return found{name: name}, err
	}
	return found{name: name, origin: origin}, nil
}

// branchOf is forkOf for the preference pairs: a fork, as for the
// leaves, or a fork pruned to the steps after its copy of the origin.
// Its history then starts at the step after the fork point, whose
// Origin is unset (to ForkOrigin it continues no fork), yet it holds the
// whole branch after the point: its first step's parent, the copy, is
// below the base but still read, until gc sweeps it, and names the
// origin. Without this the branch was never grouped, so never paired.
func (e *exporter) branchOf(ctx context.Context, name string) (found, error) {
	first, err := e.ws.FirstStep(ctx, name)
	if errors.Is(err, cairn.ErrNotFound) {
		// Listed, but no step stored (marked and never committed, or
		// swept since the listing): no branch, as for forkOf.
		return found{name: name}, nil
	}
	if err != nil || first == nil {
		return found{name: name}, err
	}
	origin, copied := first.Origin, first.Parent
	if origin == nil {
		var collected bool
		if origin, collected, err = e.prunedCopyOrigin(ctx, first); err != nil || origin == nil {
			return found{name: name, collected: collected}, err
		}
	}
	if h, err := e.head(ctx, name); err != nil || h == nil {
		return found{name: name}, err
	}
	if first.Origin != nil {
		if live, err := e.live(ctx, name, origin.Number); err != nil || !live {
			return found{name: name}, err
		}
	}
	point, err := e.resolvePoint(ctx, *origin)
	if err == nil && first.Origin == nil {
		// group resolves the pruned copy (isPoint) without reading it again.
		e.mu.Lock()
		e.points[refKey(*copied)] = point
		e.mu.Unlock()
	}
	return found{name: name, origin: origin, point: &point}, err
}

// prunedCopyOrigin returns the origin of the fork copy that first's
// parent is, if first is the oldest step of a fork pruned right above
// that copy; else nil. A copy gc swept, or that does not read, leaves
// the session no fork, as ForkOrigin has it; collected says gc swept the
// step (the session's first step names only its ID, so whether it was a
// copy, and of what, is lost).
func (e *exporter) prunedCopyOrigin(ctx context.Context, first *cairn.Step) (_ *cairn.StepRef, collected bool, _ error) {
	p := first.Parent
	if p == nil || p.Session != first.Session || p.Number+1 != first.Number {
		return nil, false, nil
	}
	st, err := e.ws.ReadStep(ctx, p.Session, p.Number)
	var ne *cas.NotObjectError
	if errors.Is(err, cairn.ErrNotFound) {
		return nil, true, ctx.Err()
	}
	if errors.Is(err, cairn.ErrCorrupt) || errors.As(err, &ne) {
		return nil, false, ctx.Err()
	}
	if err != nil {
		return nil, false, err
	}
	if st.ID.String() != p.ID || st.Origin == nil {
		return nil, false, nil
	}
	return st.Origin, false, nil
}

// DefaultReadAheadBytes is Options.ReadAheadBytes's default.
const DefaultReadAheadBytes = 32 << 20

func (e *exporter) readAhead() int64 {
	if e.opts.ReadAheadBytes > 0 {
		return e.opts.ReadAheadBytes
	}
	return DefaultReadAheadBytes
}

func (e *exporter) workers() int {
	if e.opts.Workers > 0 {
		return e.opts.Workers
	}
	return 16
}

// resolvePoint follows a fork origin that is itself the copied first step
// of a fork back to the step it copies. However long a chain of forks of
// forks at one step, each of its links is read once: what each resolves
// to is kept.
func (e *exporter) resolvePoint(ctx context.Context, p cairn.StepRef) (cairn.StepRef, error) {
	var chain []string
	seen := map[string]bool{}
	for {
		k := refKey(p)
		e.mu.Lock()
		r, known := e.points[k]
		e.mu.Unlock()
		if known {
			p = r
			break
		}
		if seen[k] {
			return p, fmt.Errorf("fork origin %s@%d: %w: its forks of forks lead back to it", p.Session, p.Number, cairn.ErrCorrupt)
		}
		seen[k] = true
		chain = append(chain, k)
		st, err := e.ws.ReadStep(ctx, p.Session, p.Number)
		var nf *cairn.NotFoundError
		if errors.As(err, &nf) && nf.Session == p.Session && nf.Step == p.Number {
			// It names the step: "read fork origin: step a@3 not found: …".
			return p, fmt.Errorf("read fork origin: %w", err)
		}
		if err != nil {
			return p, fmt.Errorf("read fork origin %s@%d: %w", p.Session, p.Number, err)
		}
		if st.ID.String() != p.ID {
			return p, fmt.Errorf("fork origin %s@%d: %w: hash %s, but the fork names %s", p.Session, p.Number, cairn.ErrCorrupt, st.ID.Short(), p.ID)
		}
		if st.Origin == nil {
			break
		}
		p = *st.Origin
	}
	e.mu.Lock()
	if e.points == nil {
		e.points = map[string]cairn.StepRef{}
	}
	for _, k := range chain {
		e.points[k] = p
	}
	e.mu.Unlock()
	return p, nil
}

// nameSelected reports whether a session's name passes the glob selectors.
func (e *exporter) nameSelected(name string) bool {
	if len(e.opts.Sessions) == 0 {
		return true
	}
	selected := false
	for _, g := range e.opts.Sessions {
		if ok, _ := path.Match(g, name); ok {
			e.mu.Lock()
			if e.matched == nil {
				e.matched = map[string]bool{}
			}
			e.matched[g] = true
			e.mu.Unlock()
			selected = true
		}
	}
	return selected
}

// eachSelected yields the name of every session the --session globs
// select, in name order.
func (e *exporter) eachSelected(ctx context.Context, yield func(string) error) error {
	return e.ws.EachSession(ctx, func(name string) error {
		if !e.nameSelected(name) {
			return nil
		}
		return yield(name)
	})
}

// headSelected applies the status and time selectors to a head.
func (e *exporter) headSelected(h *cairn.Step) bool {
	if e.opts.Status != nil && h.Status != *e.opts.Status {
		return false
	}
	if !e.opts.Since.IsZero() && h.Time.Before(e.opts.Since) {
		return false
	}
	if !e.opts.Until.IsZero() && !h.Time.Before(e.opts.Until) {
		return false
	}
	return true
}

// trajectorySelected applies the label, outcome and reward selectors.
func (e *exporter) trajectorySelected(t *Trajectory) bool {
	for k, v := range e.opts.Labels {
		if k == "outcome" {
			// The outcome field is the convention's place for it; a
			// label is its fallback (see Trajectory.Outcome).
			if !sameOutcome(v, t.Outcome) {
				return false
			}
			continue
		}
		if got, ok := t.Labels[k]; !ok || got != v {
			return false
		}
	}
	if e.opts.Outcome != "" && !sameOutcome(e.opts.Outcome, t.Outcome) {
		return false
	}
	if lo, hi := e.opts.MinReward, e.opts.MaxReward; lo != nil || hi != nil {
		r := t.Reward
		if r == nil || (lo != nil && *r < *lo) || (hi != nil && *r > *hi) {
			return false
		}
	}
	return true
}

// SameOutcome reports whether two values given for label key select the
// same trajectories: equal, or, for the key "outcome", the same outcome
// (success and pass, …; see Options.Outcome).
func SameOutcome(a, b, key string) bool {
	return a == b || key == "outcome" && sameOutcome(a, b)
}

// sameOutcome reports whether outcome got is the outcome want: equal
// ignoring case, or synonyms (success, pass, passed, … / failure, fail, …).
func sameOutcome(want, got string) bool {
	if got == "" {
		return false
	}
	if strings.EqualFold(want, got) {
		return true
	}
	w, wok := outcomeScores[strings.ToLower(want)]
	g, gok := outcomeScores[strings.ToLower(got)]
	return wok && gok && w == g
}

// live reports whether step n of session is in its history: stored, and
// not below its base (cairn prune, cairn rm).
func (e *exporter) live(ctx context.Context, session string, n uint64) (bool, error) {
	s, err := e.ws.Session(session)
	if err != nil {
		return false, err
	}
	defer e.ws.Forget(s)
	_, err = s.Step(ctx, n)
	if errors.Is(err, cairn.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// head reads a session's head; a session marked but never committed,
// or removed (cairn rm: its head is then the tombstone that fences it),
// is nil. The session is not kept in the workspace afterwards.
func (e *exporter) head(ctx context.Context, name string) (*cairn.Step, error) {
	s, err := e.ws.Session(name)
	if err != nil {
		return nil, err
	}
	defer e.ws.Forget(s)
	h, err := s.Head(ctx)
	if errors.Is(err, cairn.ErrNotFound) {
		return nil, nil
	}
	return h, err
}

// trajectories streams every selected trajectory to w, reading several
// sessions at a time and writing them in name order.
func (e *exporter) trajectories(ctx context.Context, w writer) error {
	var f *forks
	if e.opts.Branches != All {
		var err error
		if f, err = e.scanForks(ctx, false); err != nil {
			return err
		}
	}
	return ordered(ctx, e.workers(), e.readAhead(), e.eachSelected, func(ctx context.Context, name string) (*Trajectory, error) {
		if e.isDamaged(name) {
			return nil, nil
		}
		if err := reserve(ctx, 0); err != nil { // room before reading
			return nil, err
		}
		h, err := e.head(ctx, name)
		if err != nil || h == nil {
			return nil, e.unreadable(ctx, name, err)
		}
		if f != nil && f.forkedAt[refKey(headRef(h))] {
			return nil, nil // not a leaf: a fork continues from this head
		}
		if !e.headSelected(h) {
			return nil, nil
		}
		t, err := e.load(ctx, h)
		if err != nil || !e.trajectorySelected(t) {
			return nil, e.unreadable(ctx, name, err)
		}
		return t, nil
	}, e.emitTo(w))
}

// emitTo returns the function that writes each trajectory (nil: a
// session that was not selected) to w.
func (e *exporter) emitTo(w writer) func(t *Trajectory) error {
	return func(t *Trajectory) error {
		e.sum.Sessions++
		defer e.progress()
		if t == nil {
			return nil
		}
		v, err := w.Write(t)
		if err != nil {
			return fmt.Errorf("write trajectory %s: %w", t.Session, err)
		}
		if v.skip != "" {
			e.sum.Skipped = addNote(e.sum.Skipped, v.skip, t.Session, v.example[v.skip])
			return nil
		}
		if t.unpaired != "" {
			v.leave(reasonUnpairedResult)
			v.explain(reasonUnpairedResult, t.unpaired)
		}
		if t.Unjudged != "" {
			v.leave(reasonUnjudged)
			v.explain(reasonUnjudged, t.Unjudged)
		}
		if t.Truncated {
			// Said of every format, so a cut history never passes for whole.
			first := t.first()
			v.leftOut = append([]string{reasonPruned}, v.leftOut...)
			v.explain(reasonPruned, fmt.Sprintf("%s starts at %s", t.Session, first))
		}
		for _, r := range v.leftOut {
			e.sum.LeftOut = addNote(e.sum.LeftOut, r, t.Session, v.example[r])
		}
		if t.long != nil {
			e.counted(t.long.n, t.long.raw)
		} else {
			e.count(t.Steps)
		}
		return e.reportHead(ManifestHead{StepRef: headRef(t.Head()), Steps: t.steps(), Truncated: t.Truncated})
	}
}

// ErrHeadMismatch reports a head of an export manifest that the store
// holds with a different hash: the manifest is from another store.
var ErrHeadMismatch = errors.New("step does not match the export manifest")

// ErrHistoryGone reports a head of an export manifest whose trajectory
// the store no longer holds whole: older steps were pruned, or the
// session removed, since the export.
var ErrHistoryGone = errors.New("cannot be re-exported exactly")

// stepsWord says how many steps a trajectory holds: "3 steps", or
// "1 step below which history was pruned".
func stepsWord(n int, truncated bool) string {
	s := fmt.Sprintf("%d steps", n)
	if n == 1 {
		s = "1 step"
	}
	if truncated {
		s += " below which history was pruned"
	}
	return s
}

// fromHeads re-exports exactly the trajectories ending at the given heads.
func (e *exporter) fromHeads(ctx context.Context, w writer) error {
	return ordered(ctx, e.workers(), e.readAhead(), e.opts.FromHeads, func(ctx context.Context, r ManifestHead) (*Trajectory, error) {
		if err := reserve(ctx, 0); err != nil { // room before reading
			return nil, err
		}
		h, err := e.ws.ReadStep(ctx, r.Session, r.Number)
		if err != nil {
			return nil, err
		}
		if got := h.ID.String(); got != r.ID {
			return nil, fmt.Errorf("%s@%d: %w: the store has %s, the manifest names %s", r.Session, r.Number, ErrHeadMismatch, got, r.ID)
		}
		t, err := e.load(ctx, h)
		if err != nil || r.Steps == 0 {
			return t, err
		}
		if t.steps() != r.Steps || t.Truncated != r.Truncated {
			// The path is pinned by hashes, but where it ends is not:
			// a prune, or a removal, since the export cut it. A removal
			// is said as one: its counts may well be alike ("held 1
			// step below which history was pruned, now 1 step").
			if _, herr := e.ws.ReadHead(ctx, r.Session); errors.Is(herr, cairn.ErrRemoved) {
				return nil, fmt.Errorf("%s: %w: session %s was removed (cairn rm) since the export", r, ErrHistoryGone, r.Session)
			}
			return nil, fmt.Errorf("%s: %w: its trajectory held %s when exported, now %s (older steps pruned, or the session removed, since the export)",
				r, ErrHistoryGone, stepsWord(r.Steps, r.Truncated), stepsWord(t.steps(), t.Truncated))
		}
		return t, nil
	}, e.emitTo(w))
}

func (e *exporter) count(steps []Step) {
	var raw int64
	for _, s := range steps {
		if s.Rec == nil && len(s.Record) > 0 {
			raw++
		}
	}
	e.counted(len(steps), raw)
}

// counted counts a trajectory of n steps, raw of whose records do not
// follow the convention.
func (e *exporter) counted(n int, raw int64) {
	e.sum.Trajectories++
	e.sum.Steps += int64(n)
	e.sum.RawRecords += raw
}

func (e *exporter) reportHead(h ManifestHead) error {
	if e.opts.Head != nil {
		return e.opts.Head(h)
	}
	return nil
}

// load reads the path from the root to h, oldest first. For the formats
// that can write a trajectory step by step (longFormat), a path longer
// than can be held (holdSteps, holdBytes) is not: load returns what a
// first pass over it learned, and the writer reads it again (long.go).
func (e *exporter) load(ctx context.Context, h *cairn.Step) (*Trajectory, error) {
	var (
		steps []Step
		held  run        // what steps holds
		f     *firstPass // set once the path is too long to hold
	)
	err := h.Log(ctx, func(st *cairn.Step) error {
		if longFormat(e.opts.Format) && f == nil && held.full(st) {
			// Too long to hold: fold what was held into a first pass.
			f = newFirstPass(ctx, h)
			for _, s := range steps {
				f.add(s)
			}
			steps = nil
		}
		if f != nil {
			f.add(stepOf(st))
			return nil
		}
		if err := reserve(ctx, stepBytes(st)); err != nil {
			return err
		}
		steps = append(steps, stepOf(st))
		held.n++
		held.bytes += stepBytes(st)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read trajectory of %s: %w", h, err)
	}
	if f != nil {
		c := f.stateChat()
		if c == nil {
			return f.trajectory(), nil
		}
		// An adapter's conversation is read from its states, a step
		// at a time (fromstate_long.go).
		l := f.l
		l.ws = e.ws
		if err := l.checkAdapter(c); err != nil {
			return nil, fmt.Errorf("read trajectory of %s: %w", h, err)
		}
		if err := l.foldAdapted(); err != nil {
			return nil, fmt.Errorf("read trajectory of %s: %w", h, err)
		}
		t := f.trajectory()
		t.fromState = true
		return t, nil
	}
	slices.Reverse(steps)
	return e.trajectory(ctx, h, steps)
}

// stepOf returns st with its record parsed by the convention.
func stepOf(st *cairn.Step) Step {
	s := Step{Step: st}
	if len(st.Record) > 0 {
		var err error
		if s.Rec, err = cairn.ParseRecord(st.Record); err != nil && !errors.Is(err, cairn.ErrNotConventional) {
			s.Broken = recordProblem(err)
		}
	}
	return s
}

// trajectory makes the trajectory of steps, a path of history oldest
// first that ends at h: its conversation (read from the states for an
// adapter's session), labels and judgement.
func (e *exporter) trajectory(ctx context.Context, h *cairn.Step, steps []Step) (*Trajectory, error) {
	t := &Trajectory{Session: h.Session, Labels: map[string]string{}, Steps: steps}
	t.Truncated = len(t.Steps) > 0 && t.Steps[0].Truncated
	c := stateChatOf(t)
	if c != nil {
		t.fromState = true
		if err := e.fromState(ctx, t, c); err != nil {
			return nil, fmt.Errorf("read trajectory of %s: %w", h, err)
		}
	}
	for i := range t.Steps {
		// Every source's tool calls get their arguments the same way.
		s := &t.Steps[i]
		if s.Rec == nil {
			continue
		}
		if err := settleArguments(s.Rec); err != nil {
			s.Rec, s.Broken = nil, fmt.Errorf("step record: %w", err)
			if c != nil {
				s.Broken = &stateChatError{fmt.Errorf("%s: %w", c.where(s.Record), err)}
			}
		}
	}
	// And their calls and results the same ids.
	t.unpaired = settleCallIDs(t)
	var outcomeUnread, rewardUnread string
	for _, s := range t.Steps {
		if r := s.Rec; r != nil {
			for k, v := range r.Labels {
				t.Labels[k] = v
			}
		}
		// The newest outcome and reward are the trajectory's, even if
		// they cannot be read: an older one does not stand in for them.
		j := judgementOf(s)
		if j.hasOutcome {
			t.Outcome, outcomeUnread = j.outcome, ""
			if j.unread {
				outcomeUnread = unreadAt(s)
			}
		}
		if j.hasReward {
			t.Reward, rewardUnread = j.reward, ""
			if j.unread {
				rewardUnread = unreadAt(s)
			}
		}
	}
	t.Unjudged = cmp.Or(outcomeUnread, rewardUnread)
	return t, nil
}

// recordProblem says how a record breaks the convention in the record's
// own terms: a JSON decoding error names Go types ("Go struct field
// Record.messages of type []cairn.Message"), which mean nothing to the
// user; it becomes "messages: a number where a list belongs".
func recordProblem(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err
	}
	want := "a value of another kind"
	if te.Type != nil {
		switch te.Type.Kind() {
		case reflect.Slice, reflect.Array:
			want = "a list"
		case reflect.Struct, reflect.Map:
			want = "an object"
		case reflect.String:
			want = "a string"
		case reflect.Bool:
			want = "true or false"
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
			want = "a number"
		}
	}
	got := te.Value
	switch got {
	case "array":
		got = "a list"
	case "object":
		got = "an object"
	case "string":
		got = "a string"
	case "bool":
		got = "true or false"
	default:
		if strings.HasPrefix(got, "number") {
			got = "a number"
		}
	}
	field := te.Field
	if field == "" {
		field = "the record"
	}
	return fmt.Errorf("step record: %s: %s where %s belongs", field, got, want)
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
