package manifest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/cairnlog/cairn/cas"
)

// GCOptions tune a GC run.
type GCOptions struct {
	// Grace: an object is deleted only if a previous run already found it
	// unreachable at least Grace ago and it was written at least Grace
	// ago. No writer or forker depends on it: what they may still name
	// is kept or fenced whatever the grace (docs/reliability.md); it is a
	// margin for readers. Zero is allowed; negative counts as zero.
	Grace time.Duration
	// DryRun reports what the run would do and changes nothing.
	DryRun bool
	// Now, if set, is taken as the store's clock (tests); zero: gc reads
	// the store's clock (see gcNow).
	Now time.Time
	// Clock is this machine's clock, which measures the time passed
	// since the store's clock was read, and the time of a dry run
	// (nil: time.Now; tests move it).
	Clock func() time.Time
}

// GCReport says what a GC run found and did.
type GCReport struct {
	Objects     int   // data objects listed (step objects and packs)
	Bytes       int64 // their bytes
	LiveSteps   int   // live steps whose manifests were read
	LiveObjects int
	LiveBytes   int64
	// Candidates is the number of unreachable objects left for a later
	// run, CandidateBytes their bytes.
	Candidates     int
	CandidateBytes int64
	// YoungSteps counts the candidates that are step objects younger
	// than manifest.SlotFenceAge (30 minutes): kept until then whatever
	// the grace, so that a writer paused below one cannot fill its slot
	// again unnoticed.
	YoungSteps int
	// Deleted objects (or, in a dry run, objects that would be deleted).
	Deleted      int
	DeletedBytes int64
	DeletedKeys  []string
	// Tombstones written (in a dry run, that would be): the fences that
	// take the slot above a removed session's last step, and the slots
	// of forks whose pin expired. TombstoneKeys are their keys; they are
	// new objects, not among DeletedKeys.
	Tombstones    int
	TombstoneKeys []string
	Duration      time.Duration
	DryRun        bool
	// Note explains anything unusual (an unreadable gc state, say).
	Note string
}

// ForkPinGrace is the least time for which gc keeps honouring a fork's
// pin (see Pin) whose fork has not landed, whatever GCOptions.Grace
// says: two runs at least this far apart must have seen it before gc
// expires it by fencing the fork's slot. Safety never depends on it (a
// forker that comes back after the fence loses its slot); it only spares
// slow forks from failing beside a gc with no grace, at the cost of
// keeping a crashed fork's source a while longer.
const ForkPinGrace = 10 * time.Minute

// HeadTrust is how long a writer trusts a head it holds without hearing
// from the store: a writer that has not confirmed its session's head (by
// reading it or by an acknowledged commit) for longer reads it again
// before its next commit, and so does a process starting from a head
// cache saved longer ago. With SlotFenceAge it keeps a slot that gc
// deleted from being filled again unnoticed.
const HeadTrust = 10 * time.Minute

// SlotFenceAge is the least age of a step slot's object (a step or a
// tombstone, steps/S/N) before gc deletes it, whatever GCOptions.Grace
// says. A deleted slot is empty again, and a writer paused with the step
// below it as its head would fill it with a conditional put that
// succeeds, its step acknowledged below the session's base where no
// reader looks. Such a writer got its head before the slot was written,
// so once the slot is SlotFenceAge old the writer has held its head for
// longer than HeadTrust and reads the store's head before it commits,
// and loses. gc measures the slot's age on the store's clock (gcNow),
// so a gc host's clock running ahead of the store's does not shorten
// it; the margin over HeadTrust is kept all the same.
const SlotFenceAge = 30 * time.Minute

// GC deletes data objects that no live step needs (docs/maintenance.md;
// invariant I5). It lists the data objects, then marks every
// object reachable from every live step of every session, then sweeps in
// two phases: an unreachable object becomes a candidate, recorded in the
// gc state object; a later run deletes it only if it is still
// unreachable, it was first found so at least Grace ago, and it was
// written at least Grace ago. GC takes no lock: a step committed after
// the listing is simply not examined, and one committed before it is
// reachable from its session's head. A failure to read any live step
// aborts the run before anything is deleted.
//
// Grace never protects an in-flight writer (it may be zero, and a writer
// may be paused for any time). What a writer or forker may still name is
// kept by rule, or fenced off before it is deleted (I4):
//
//   - a commit names only its parent's layout (live while the parent is
//     its session's head, which pruning keeps) and the pack it wrote
//     first; a pack packs/S/N is kept while S has no step N or above;
//   - a removed session is fenced before anything is deleted: a
//     tombstone goes into the slot above its last step with a
//     conditional put, so a writer still building on that step loses
//     its slot; if the put loses, a writer revived the session and
//     nothing is deleted this run;
//   - a fork writes a pin before it reads its source (Repo.Fork); gc
//     reads the pins after its mark and keeps each pinned source's chain
//     while the fork's slot is empty. A pin seen for max(Grace,
//     ForkPinGrace) by two runs is expired by fencing its slot with a
//     tombstone, so the forker, if it ever resumes, loses (unless a
//     writer has created the fork's name since: see expirePin);
//   - a step object is deleted only once it is SlotFenceAge old, and a
//     writer that has held its head for longer than HeadTrust reads the
//     store's head before it commits, so a slot emptied here is never
//     filled again by a writer paused below it.
func (r *Repo) GC(ctx context.Context, opts GCOptions) (*GCReport, error) {
	start := time.Now()
	if !opts.Now.IsZero() && !GCTimeOK(opts.Now) {
		// Checked before anything: every new candidate is recorded at
		// it, and a state that cannot be written is found only after
		// the sweep.
		return nil, fmt.Errorf("gc: %w: GCOptions.Now %s is outside the years 1 to 9999 the gc state can record; nothing deleted",
			ErrInvalidGCOptions, opts.Now.UTC().Format(time.RFC3339))
	}
	grace := max(opts.Grace, 0)
	rep := &GCReport{DryRun: opts.DryRun}
	prev, err := r.readGCState(ctx)
	if errors.Is(err, cas.ErrCorrupt) {
		// Losing the candidates only delays deletions by one run.
		then := "this run sets it aside and saves a new one"
		if opts.DryRun {
			then = "a run without --dry-run sets it aside and saves a new one"
		}
		rep.Note = fmt.Sprintf("%s is damaged: %s; %s, so what the last run found unreachable is deleted one run later than it would have been",
			DescribeKey(GCStateKey), reason(err, GCStateKey), then)
		prev = NewGCState(time.Time{})
	} else if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	l, err := r.list(ctx)
	if err == nil {
		err = l.folderErr() // nothing is deleted until it is removed
	}
	if err == nil {
		err = l.blockedErr() // nor while a session's steps cannot be listed
	}
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	rep.Objects, rep.Bytes = len(l.objects), l.bytes
	live, _, err := r.mark(ctx, l, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("gc: %w; nothing deleted", err)
	}
	rep.LiveSteps = live.steps
	// Before the pins: a pinned chain may name what an earlier run
	// deleted (see markPin), a live step's never.
	if gone, err := r.absent(ctx, l.missing(live)); err != nil {
		return nil, fmt.Errorf("gc: %w; nothing deleted", err)
	} else if len(gone) > 0 {
		more := ""
		if len(gone) > 1 {
			more = " and others"
		}
		return nil, fmt.Errorf("gc: %w: %s%s, which a live step needs, is missing from the store (cairn verify names the steps); nothing deleted", cas.ErrCorrupt, DescribeKey(gone[0]), more)
	}
	// Pins are read after every base the mark used: a fork that read its
	// source's base after that either saw it pruned (and refuses) or
	// wrote its pin before this listing of pins.
	pins, err := r.Pins(ctx)
	if err != nil {
		return nil, fmt.Errorf("gc: %w; nothing deleted", err)
	}
	// The clock for candidates is read after the mark, so that an object
	// is never first found unreachable before a prune that made it so,
	// and on the store's clock, as the objects' times are.
	now, err := r.gcNow(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("gc: %w; nothing deleted", err)
	}
	if !GCTimeOK(now) {
		return nil, fmt.Errorf("gc: the store's clock reads %s, which the gc state cannot record (years 1 to 9999); nothing deleted",
			now.UTC().Format(time.RFC3339))
	}
	seenSince := func(key string, modTime time.Time, grace time.Duration) (first time.Time, due bool) {
		first, seen := prev.Candidates[key]
		if !seen || first.After(now) {
			first = now
		}
		old := modTime.IsZero() || now.Sub(modTime) >= grace
		return first, seen && now.Sub(first) >= grace && old
	}
	next := NewGCState(now)
	var stalePins, expiredPins []PinInfo
	for _, p := range pins {
		if _, landed := l.objects[StepKey(p.Pin.Target, p.Pin.Step)]; landed {
			stalePins = append(stalePins, p) // its slot is taken: it protects nothing
			continue
		}
		if err := r.markPin(ctx, live, p.Pin); err != nil {
			return nil, fmt.Errorf("gc: %s: %w; nothing deleted", DescribeKey(p.Key), err)
		}
		first, due := seenSince(p.Key, p.Info.ModTime, max(grace, ForkPinGrace))
		if due {
			expiredPins = append(expiredPins, p)
		} else if len(next.Candidates) < MaxGCCandidates {
			next.Candidates[p.Key] = first
		}
	}
	live.finish()

	var doomed []string
	for key, info := range l.objects {
		if live.has(key) || l.packInFlight(key) {
			rep.LiveObjects++
			rep.LiveBytes += info.Size
			continue
		}
		first, due := seenSince(key, info.ModTime, grace)
		if _, _, slot := ParseStepKey(key); slot && (info.ModTime.IsZero() || now.Sub(info.ModTime) < SlotFenceAge) {
			due = false // see SlotFenceAge
			rep.YoungSteps++
		}
		if due {
			doomed = append(doomed, key)
			rep.Deleted++
			rep.DeletedBytes += info.Size
			continue
		}
		if len(next.Candidates) < MaxGCCandidates {
			next.Candidates[key] = first
		}
		rep.Candidates++
		rep.CandidateBytes += info.Size
	}
	// Step objects in ascending order per session, so that an interrupted
	// sweep leaves each session's newest objects.
	sort.Strings(doomed)
	rep.DeletedKeys = doomed
	if opts.DryRun {
		for sess, top := range live.removed {
			rep.TombstoneKeys = append(rep.TombstoneKeys, StepKey(sess, top+1))
		}
		for _, p := range expiredPins {
			rep.TombstoneKeys = append(rep.TombstoneKeys, StepKey(p.Pin.Target, p.Pin.Step))
		}
		sort.Strings(rep.TombstoneKeys)
		rep.Tombstones = len(rep.TombstoneKeys)
		rep.Duration = time.Since(start)
		return rep, nil
	}
	// From here the run changes the store. A step that fails returns the
	// report of what the run did so far (its tombstones, the objects it
	// deleted) with the error, which says it too: the caller must not
	// take a failed run for one that deleted nothing.
	done := 0 // of doomed, deleted
	fail := func(err error) (*GCReport, error) {
		rep.DeletedKeys = doomed[:done:done]
		rep.Deleted, rep.DeletedBytes = done, 0
		for _, k := range rep.DeletedKeys {
			rep.DeletedBytes += l.objects[k].Size
		}
		for _, k := range doomed[done:] { // still there, for a later run
			rep.Candidates++
			rep.CandidateBytes += l.objects[k].Size
		}
		rep.Duration = time.Since(start)
		did := "nothing deleted"
		if done > 0 {
			did = fmt.Sprintf("%d objects (%d bytes) deleted before it", done, rep.DeletedBytes)
		}
		if rep.Tombstones > 0 {
			did += fmt.Sprintf(", %d tombstones written", rep.Tombstones)
		}
		return rep, fmt.Errorf("gc: %w; %s", err, did)
	}
	// Fences first: once every removed session's next slot is taken, no
	// writer that read one of their steps can acknowledge a step naming
	// what the sweep deletes.
	sessions := make([]string, 0, len(live.removed))
	for sess := range live.removed {
		sessions = append(sessions, sess)
	}
	sort.Strings(sessions)
	for _, sess := range sessions {
		top := live.removed[sess]
		err := r.Fence(ctx, sess, top+1)
		if errors.Is(err, ErrRevived) {
			note := fmt.Sprintf("removed session %s got step %d during the run; nothing deleted", sess, top+1)
			if rep.Note != "" {
				note = rep.Note + "; " + note
			}
			rep.Note = note
			// What was to be deleted stays, for a later run (which
			// finds it anew: its grace starts over): counted as a
			// candidate, so that the report still adds up to the
			// objects listed.
			for _, k := range doomed {
				rep.Candidates++
				rep.CandidateBytes += l.objects[k].Size
			}
			rep.Deleted, rep.DeletedBytes, rep.DeletedKeys = 0, 0, nil
			doomed = nil
			continue
		}
		if err != nil {
			return fail(err)
		}
		rep.Tombstones++
		rep.TombstoneKeys = append(rep.TombstoneKeys, StepKey(sess, top+1))
	}
	for sess, top := range live.tombstoneHeads {
		// A fence whose base was never raised (gc stopped between the
		// two): the session is removed, not headed by its tombstone.
		if err := r.WriteBase(ctx, sess, top+1); err != nil {
			return fail(err)
		}
	}
	for _, p := range expiredPins {
		err := r.expirePin(ctx, p.Pin)
		if errors.Is(err, errNameTaken) {
			// Kept, and honoured while its slot is empty: see expirePin.
			if len(next.Candidates) < MaxGCCandidates {
				next.Candidates[p.Key] = now
			}
			continue
		}
		if err != nil && !errors.Is(err, ErrRevived) {
			return fail(fmt.Errorf("expire %s: %w", DescribeKey(p.Key), err))
		}
		if err == nil {
			rep.Tombstones++
			rep.TombstoneKeys = append(rep.TombstoneKeys, StepKey(p.Pin.Target, p.Pin.Step))
		}
		stalePins = append(stalePins, p)
	}
	for _, key := range doomed {
		if err := r.store.Delete(ctx, key); err != nil {
			return fail(fmt.Errorf("delete %s: %w", DescribeKey(key), err))
		}
		r.forget(key)
		done++
	}
	for _, p := range stalePins {
		if err := r.DeletePin(ctx, p.Key); err != nil {
			return fail(err)
		}
	}
	if err := r.writeGCState(ctx, next); err != nil {
		return fail(err)
	}
	rep.Duration = time.Since(start)
	return rep, nil
}

// markPin adds to live the chain a pinned fork will name: its source
// step, that step's layout, and its ancestors down to the pin's floor.
// A step of that chain that is gone ends the walk without error: gc
// deleted it only after a mark that did not see this pin, that is, after
// the base of the session whose history held the source (its own, or
// the fork's it was read through) had risen above it, and the forker
// reads that base after writing its pin, so its fork starts above the
// gone step or refuses.
func (r *Repo) markPin(ctx context.Context, live *liveSet, p *Pin) error {
	ptr, err := p.SourcePointer()
	if err != nil {
		return err
	}
	cr := newChainReader(r)
	session, n, want := ptr.Session, ptr.Number, &ptr.ID
	for n >= p.Floor && n > 0 {
		st, err := cr.read(ctx, session, n, want)
		if errors.Is(err, cas.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		live.addStep(st.Session, st.Number)
		live.addLayout(st.Layout)
		if st.Parent == nil {
			return nil
		}
		id := st.Parent.ID
		session, n, want = st.Parent.Session, st.Parent.Number, &id
	}
	return nil
}

// errNameTaken reports that an expired pin's target has steps of its own
// below the fork's slot: a writer created the name after the fork began.
var errNameTaken = errors.New("the fork's name has steps of its own")

// expirePin fences the slot of a fork whose pin expired, as Fence does,
// unless the fork's name has steps of its own: a writer created it after
// the fork began (the fork's first checks found it empty), and a
// tombstone above its steps, with the base raised past it, would remove
// that writer's live session. Such a pin is left in place and honoured
// while the fork's slot is empty (its source's chain is kept, a cost
// that ends once the name's steps reach the slot, when the pin protects
// nothing); it returns errNameTaken. The name is checked before the
// tombstone is put and again after it: if a step below it landed in
// between, the tombstone is deleted again before the base is raised.
// The writer of such a step, a session's first, finds the tombstone
// above it after its put and is refused (Session.checkLanded in the
// root package): never acknowledged below a fence.
func (r *Repo) expirePin(ctx context.Context, p *Pin) error {
	first, err := r.FirstStep(ctx, p.Target)
	if err != nil {
		return err
	}
	if first != 0 && first != p.Step {
		// (Steps only above the slot: the name grew past it and gc
		// emptied it; a fence there would lower the name's base.)
		return errNameTaken
	}
	// The forker may have died before it marked its new session: a
	// session with a step (the fence) always has a marker. (Not for a
	// name taken above: rewriting its marker would void its writers'
	// head caches at every run.)
	if err := r.MarkSession(ctx, p.Target); err != nil {
		return err
	}
	ours, err := r.putFence(ctx, p.Target, p.Step)
	if err != nil {
		return err
	}
	if first, err = r.FirstStep(ctx, p.Target); err != nil {
		return err
	}
	if first != 0 && first < p.Step {
		if ours {
			key := StepKey(p.Target, p.Step)
			if err := r.store.Delete(ctx, key); err != nil && !errors.Is(err, cas.ErrNotFound) {
				return fmt.Errorf("gc: delete %s: %w", DescribeKey(key), err)
			}
			r.forget(key)
		}
		return errNameTaken
	}
	if !ours {
		// Another run's fence: its base is that run's to raise (or a
		// later run's, as for any fence that heads its session); a
		// base written here, late, could be below one the name has.
		return ErrRevived
	}
	return r.WriteBase(ctx, p.Target, p.Step+1)
}

// ErrInvalidGCOptions reports GCOptions that gc cannot run with.
var ErrInvalidGCOptions = errors.New("invalid gc options")

// ErrRevived reports that a fence's slot was already taken by a step
// that is no tombstone: a writer extended the session first.
var ErrRevived = errors.New("slot taken by a writer")

// Fence takes slot n of session for a tombstone, with a conditional put,
// and then raises the session's base above it, so that the session reads
// as removed and any writer or forker that still wants slot n loses it.
// If the slot holds a step already it returns ErrRevived, unless that
// step is a tombstone (another fence took it). Removing a session is
// fencing the slot above its head; gc fences a removed session before
// it deletes anything of it.
func (r *Repo) Fence(ctx context.Context, session string, n uint64) error {
	if _, err := r.putFence(ctx, session, n); err != nil {
		return err
	}
	return r.WriteBase(ctx, session, n+1)
}

// putFence puts a tombstone into slot n of session, reporting whether
// it was this call's: a slot that already holds a tombstone (another
// run's fence) is fenced too; one a writer took is ErrRevived.
func (r *Repo) putFence(ctx context.Context, session string, n uint64) (ours bool, err error) {
	err = r.writeTombstone(ctx, session, n)
	if errors.Is(err, ErrSlotTaken) {
		st, rerr := r.ReadStep(ctx, session, n)
		if rerr != nil {
			return false, fmt.Errorf("fence %s@%d: %w", session, n, rerr)
		}
		if !IsTombstone(st.Manifest) {
			return false, ErrRevived
		}
		return false, nil
	}
	return err == nil, err
}

// absent returns the keys of those that the store does not hold. An
// object the listing lacks may still be there: the listing is not one
// instant, and a fork written while it ran can name a step of a session
// listed before that step was written. Only an object the store says is
// not there is missing.
func (r *Repo) absent(ctx context.Context, keys []string) ([]string, error) {
	var out []string
	for _, k := range keys {
		_, err := r.store.Stat(ctx, k)
		switch {
		case errors.Is(err, cas.ErrNotFound):
			out = append(out, k)
		case err != nil:
			return nil, fmt.Errorf("check %s: %w", k, err)
		}
	}
	return out, nil
}
