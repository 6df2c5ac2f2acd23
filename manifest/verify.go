package manifest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/manifest/tree"
)

// Problem is one failure found by Verify. Its words (String) lead with
// what a user of sessions and steps knows: the step whose reading failed,
// or else the object in words (DescribeKey: "the marker of session a"),
// what is wrong with it, and what that means for them (Effect); the
// object's store key, which an operator restoring from a backup needs,
// comes last, as a detail.
type Problem struct {
	Session string // the session the problem belongs to (a fork pin's: the session it forks to)
	Step    string // session@step whose reading failed; "" when the problem is no step's (a marker, a hint, a pin)
	Object  string // the key of the bad or missing object, if known
	Err     error
	Effect  string // what the damage means: what cannot be read, whether gc runs, what to do
}

// String says the problem in one line: its Words, then the object's key
// as a detail, "(object steps/a/00000000000000000010)".
func (p Problem) String() string {
	if p.Object == "" || p.unlisted() {
		// A listing that failed names no object an operator restores.
		return p.Words()
	}
	return p.Words() + " (object " + p.Object + ")"
}

// Words says the problem without the object's key: "step a@32 cannot be
// read: step a@10, which holds part of its state, is damaged (content
// hashes to …)", "the marker of session a is damaged (it holds …): only
// verify reads it (…)".
func (p Problem) Words() string {
	var b strings.Builder
	what, own := "", p.Object != "" && p.Step != "" && p.Object == stepRefKey(p.Step)
	if p.Object != "" {
		what = objectWords(p.Object)
	}
	switch {
	case p.Step != "" && (own || p.Object == ""):
		b.WriteString("step " + p.Step)
	case p.Step != "":
		fmt.Fprintf(&b, "step %s cannot be read: %s, which holds part of its state,", p.Step, what)
	default:
		b.WriteString(what)
	}
	var ne *cas.NotObjectError
	if p.Object != "" && p.Step == "" && layoutDir(p.Object) && errors.As(p.Err, &ne) {
		// A directory of the layout, not an object: "the steps of
		// session a cannot be listed (the store holds a file where
		// their directory belongs)".
		b.WriteString(" cannot be listed (the store holds " + ne.What + " where their directory belongs)")
	} else if p.unlisted() {
		// The listing failed, not an object: "the steps of session a
		// cannot be listed (the store answered as no S3 server does
		// (…))", as cairn log says it.
		b.WriteString(" cannot be listed")
		if why := reason(p.Err, ""); why != "" {
			b.WriteString(" (" + why + ")")
		}
	} else {
		b.WriteString(" " + damageWords(p.Err))
		if why := reason(p.Err, p.Object); why != "" {
			b.WriteString(" (" + why + ")")
		}
	}
	if p.Effect != "" {
		b.WriteString(": " + p.Effect)
	}
	return b.String()
}

// unlisted reports whether the problem is a listing of a directory of
// the layout that failed (its Object is the directory, and nothing other
// than a directory stands there).
func (p Problem) unlisted() bool {
	var ne *cas.NotObjectError
	return p.Object != "" && p.Step == "" && layoutDir(p.Object) && !errors.As(p.Err, &ne)
}

// layoutDir reports whether key names no object but a directory of the
// layout, as objectWords says it ("the steps of session a").
func layoutDir(key string) bool {
	return DescribeKey(key) == describeUnknown && DescribePrefix(key+"/") != DescribePrefix("")
}

// objectWords names an object as Problem.String does: a step object as
// the step (`step a@3`), any other as DescribeKey does.
func objectWords(key string) string {
	if s, n, ok := ParseStepKey(key); ok {
		return fmt.Sprintf("step %s@%d", s, n)
	}
	if d := DescribeKey(key); d != describeUnknown {
		return d
	}
	if d := DescribePrefix(key + "/"); d != DescribePrefix("") {
		return d // a directory of the layout: "the steps of session a"
	}
	return describeUnknown
}

// stepRefKey returns the key of the step object a session@step reference
// names, or "".
func stepRefKey(ref string) string {
	s, num, ok := strings.Cut(ref, "@")
	n, err := strconv.ParseUint(num, 10, 64)
	if !ok || err != nil {
		return ""
	}
	return StepKey(s, n)
}

// damageWords says what kind of failure err is: "is damaged", "is
// missing", "is too large or too deep" or "cannot be read".
func damageWords(err error) string {
	var ne *cas.NotObjectError
	switch {
	case errors.As(err, &ne):
		return "is not a file"
	case errors.Is(err, cas.ErrNotFound):
		return "is missing"
	case errors.Is(err, cas.ErrCorrupt):
		return "is damaged"
	case errors.Is(err, tree.ErrLimit):
		return "exceeds a limit"
	}
	return "cannot be read"
}

// reason is err's text less what Problem.String says already: the kind
// of failure, and the object's words that this package's errors begin
// with ("corrupt object: session a, step 10: content hashes to …" is
// "content hashes to …"); "" when nothing is left ("not found").
func reason(err error, key string) string {
	var base *BaseError
	var lost *lostError
	if errors.As(err, &lost) {
		return "" // "is missing" says it
	}
	var ne *cas.NotObjectError
	if errors.As(err, &ne) {
		if ne.Parent {
			return "the store holds " + ne.What + " where a directory holding it belongs"
		}
		return "the store holds " + ne.What + " where it belongs"
	}
	var un *cas.UnavailableError
	var re *cas.RefusedError
	switch {
	case errors.As(err, &un) && un.Why != "":
		// The store's failure in the words cairn says it in elsewhere,
		// without the request's key or the backend's text.
		return "the store " + un.Why
	case errors.As(err, &re) && re.Why != "":
		return "the store refused the request: " + re.Why
	}
	if errors.As(err, &base) {
		return fmt.Sprintf("it says step %d but the newest step is %d, which is neither a removal nor a prune", base.Base, base.Head)
	}
	text := err.Error()
	for _, kind := range []error{cas.ErrCorrupt, cas.ErrNotFound} {
		text = strings.TrimPrefix(text, kind.Error()+": ")
	}
	text = strings.TrimPrefix(text, "read ")
	if key != "" {
		words := DescribeKey(key)
		text = strings.TrimPrefix(text, "the manifest of "+words+": ")
		if rest, ok := strings.CutPrefix(text, words); ok {
			text = strings.TrimLeft(rest, ": ")
			if startsWithVerb(text) {
				text = "it " + text
			}
		}
	}
	if text == cas.ErrNotFound.Error() {
		return ""
	}
	return strings.TrimSuffix(text, ": "+cas.ErrNotFound.Error())
}

// startsWithVerb reports whether a reason left after the object's words
// begins with a verb ("holds …", "names …", "is …"), which reads as a
// sentence only with its subject: "it holds …".
func startsWithVerb(text string) bool {
	verb, _, _ := strings.Cut(text, " ")
	switch verb {
	case "holds", "names", "is", "has", "says", "lacks":
		return true
	}
	return false
}

// VerifyReport is the result of Verify.
type VerifyReport struct {
	Sessions int // sessions with a history (removed ones are checked, not counted), and damaged ones
	Steps    int
	Objects  int // step objects and packs read and checked: every live step's own, and every one a layout names
	Blobs    int // distinct blobs and nodes re-hashed
	Problems []Problem
}

// Verify re-reads and re-hashes everything reachable from the named
// sessions (all sessions if none are named): every step object's
// checksum, every manifest against its child's parent hash, and every
// blob and node of every step's state. It reports every bad object it
// finds rather than stopping at the first; its error is only for
// failures to run at all.
func (r *Repo) Verify(ctx context.Context, sessions ...string) (*VerifyReport, error) {
	whole := len(sessions) == 0
	if !whole {
		// A session named twice is checked, and counted, once.
		named := make(map[string]bool, len(sessions))
		once := make([]string, 0, len(sessions))
		for _, n := range sessions {
			if !named[n] {
				named[n] = true
				once = append(once, n)
			}
		}
		sessions = once
	}
	if whole {
		// Every session with a marker, and every one with step objects:
		// a session whose marker is gone is still checked (and reported).
		seen := map[string]bool{}
		add := func(n string) error {
			if !seen[n] {
				seen[n] = true
				sessions = append(sessions, n)
			}
			return nil
		}
		if err := r.Sessions(ctx, add); err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		if err := r.StepSessions(ctx, add); err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		sort.Strings(sessions)
	}
	v := &verifier{r: r, rep: &VerifyReport{}, objects: map[string]bool{}, counted: map[string]bool{}, blobs: map[cas.ID]bool{}, steps: map[string]uint64{}}
	if whole {
		// gc reads every fork pin and refuses a store with a bad one.
		if err := r.CheckPins(ctx, func(key string, err error) { v.damage(key, pinTarget(key), err, effectPin) }); err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
	}
	for _, name := range sessions {
		if err := ValidSession(name); err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		if v.session(ctx, name) {
			v.rep.Sessions++
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("verify %s: %w", name, err)
		}
	}
	prefixes := []string{""}
	if !whole {
		prefixes = prefixes[:0]
		for _, name := range sessions {
			prefixes = append(prefixes, sessionStepsPrefix(name), packsPrefix+name+"/")
		}
	}
	for _, prefix := range prefixes {
		if err := v.notObjects(ctx, prefix); err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
	}
	sort.Slice(v.rep.Problems, func(i, j int) bool { return v.rep.Problems[i].String() < v.rep.Problems[j].String() })
	return v.rep, nil
}

// notObjects reports what stands under prefix where an object belongs
// but is none (cas.Info.NotObject: a link, a pipe, a device or a
// directory that a local store found), which no other reader lists:
// every link, pipe or device, and an (empty) directory at the key of an
// object of the layout; an empty directory elsewhere is what deletes
// leave behind. One a walk of a session met already is not said again.
// A listing refused for what stands in its way is reported likewise, and
// so is a folder at the key of an object of the layout (see folders),
// which no reader meets but no commit passes.
func (v *verifier) notObjects(ctx context.Context, prefix string) error {
	var f folders
	err := v.r.listStore(ctx, prefix, "", func(i cas.Info) error {
		if k, ok := f.at(i); ok {
			v.damage(k, placeSession(k), &cas.NotObjectError{Key: k, What: folderWhat}, "")
			return nil
		}
		if i.NotObject == "" || i.Apart || i.NotObject == "a directory" && DescribeKey(i.Key) == describeUnknown {
			return nil
		}
		v.damage(i.Key, placeSession(i.Key), &cas.NotObjectError{Key: i.Key, What: i.NotObject}, "")
		return nil
	})
	var ne *cas.NotObjectError
	if errors.As(err, &ne) {
		key := strings.TrimSuffix(prefix, "/")
		v.damage(key, placeSession(key), &cas.NotObjectError{Key: key, What: ne.What}, "")
		return nil
	}
	return err
}

// placeSession is the session (or, for a step's key, the step: "a@3")
// a problem at key belongs to, "" if none.
func placeSession(key string) string {
	if s, n, ok := ParseStepKey(key); ok {
		return fmt.Sprintf("%s@%d", s, n)
	}
	for _, p := range []string{stepsPrefix, packsPrefix, sessionsPrefix} {
		if rest, ok := strings.CutPrefix(key, p); ok {
			s, _, _ := strings.Cut(rest, "/")
			if ValidSession(s) == nil {
				return s
			}
		}
	}
	return ""
}

type verifier struct {
	r       *Repo
	rep     *VerifyReport
	objects map[string]bool // layout objects checked (or found bad)
	counted map[string]bool // objects read and checked, for Objects
	blobs   map[cas.ID]bool
	steps   map[string]uint64 // step key -> the floor it was walked to
	// misplaced: the keys (or prefixes) where something other than an
	// object was reported standing (cas.NotObjectError).
	misplaced map[string]bool

	// unloaded: an object of the layout of the step being checked could
	// not be read (and was reported), so a blob no readable object holds
	// may be in it.
	unloaded bool

	// For lost, read when a walk without a floor meets a gap.
	stored  map[string][]uint64 // session -> its step numbers the store holds, ascending
	entries map[string]uint64   // session -> the highest step other sessions reach
	unread  map[string]bool     // sessions whose oldest step could not be read ("": listing or pins)
}

// count counts an object read and checked once in Objects, whether a
// step's own or one a layout names.
func (v *verifier) count(key string) {
	if !v.counted[key] {
		v.counted[key] = true
		v.rep.Objects++
	}
}

// problem reports err, met reading object (a key, or "" if unknown) at a
// session ("a") or a step ("a@3"), with no more to say of its effect than
// what it names.
func (v *verifier) problem(object, at string, err error) { v.damage(object, at, err, "") }

// damage is problem with what the damage means for the user (Effect).
func (v *verifier) damage(object, at string, err error, effect string) {
	var ne *cas.NotObjectError
	if errors.As(err, &ne) {
		// Something other than an object stands in its place: said
		// once, whichever reader met it, with what to do.
		// A listing's prefix ("steps/a/") is said as the directory it
		// names ("steps/a": the steps of session a), once.
		key := strings.TrimSuffix(ne.Key, "/")
		if v.misplaced[key] {
			return
		}
		if v.misplaced == nil {
			v.misplaced = map[string]bool{}
		}
		v.misplaced[key] = true
		if object == "" || ne.Parent {
			object = key
		}
		effect = effectNotObject
	}
	p := Problem{Object: object, Session: at, Err: err, Effect: effect}
	if s, _, ok := strings.Cut(at, "@"); ok {
		p.Session, p.Step = s, at
	}
	v.rep.Problems = append(v.rep.Problems, p)
}

// What damage to each kind of object means for the user, as verify says
// it (Problem.Effect): what cannot be read, whether gc runs, and what to do.
const (
	effectStep      = "neither it nor a step whose state uses its data can be read, and cairn gc deletes nothing until it is restored from a backup"
	effectStepData  = "neither it nor a step whose state uses its data can be read; cairn gc, which reads only its manifest, still runs and keeps it (restore it from a backup)"
	effectTombstone = "it marks the session removed; cairn sessions, du and gc fail until it is restored from a backup"
	effectBase      = "readers refuse the session and cairn gc deletes nothing until it is repaired"
	effectHint      = "readers find the head without it and cairn gc runs; delete it to repair (commits write a new one)"
	effectMarker    = "only verify reads it (the session's steps read and cairn gc runs); to repair, restore it holding just the session's name"
	effectNoMarker  = "cairn sessions does not list the session; its steps read and cairn gc runs"
	effectPin       = "cairn gc deletes nothing until it is deleted (the fork it kept, if it was still running, then fails)"
	effectPackGone  = "cairn gc deletes nothing until it is restored from a backup"
	effectNotObject = "cairn reads nothing through it and never deletes it; remove it to repair (restore what belongs there from a backup, if anything does)"
)

// session checks one session from its head down to its base, and reports
// whether name counts as a session: one `cairn sessions`
// lists, or one too damaged to tell; not a removed one, nor a marker
// without steps.
func (v *verifier) session(ctx context.Context, name string) bool {
	// The head as ReadHead settles it: a step still landing (listed, not
	// yet readable) is waited for, not reported; one that cannot be read
	// is where the walk starts, and the walk reports it.
	_, n, _, headErr := v.r.ReadHead(ctx, name)
	if n == 0 && headErr != nil {
		if _, err := v.r.ReadBase(ctx, name); err != nil {
			// ReadHead read the base marker too, and it is the bad
			// object. The rest of the session is still checked.
			v.damage(v.r.BaseMarkerKey(ctx, name), name, err, effectBase)
			if n, err = v.r.FindHead(ctx, name); err == nil && n > 0 {
				v.rest(ctx, name, n, 0)
			}
			return true
		}
		var unlisted *unlistedError
		if errors.As(headErr, &unlisted) {
			// Not the head hint: the listing of the session's steps,
			// said as the directory it names ("the steps of session s").
			v.problem(strings.TrimSuffix(sessionStepsPrefix(name), "/"), name, headErr)
			return true
		}
		v.problem(HintKey(name), name, headErr)
		return true
	}
	if n == 0 {
		return false // a marker without steps: a commit that never landed
	}
	floor, err := v.r.ReadBase(ctx, name)
	if err != nil {
		v.damage(v.r.BaseMarkerKey(ctx, name), name, err, effectBase)
		v.rest(ctx, name, n, 0)
		return true
	}
	if n < floor {
		// A writer may have committed and pruned since the head was
		// found: look again, after the base, as gc does.
		if _, m, _, err := v.r.ReadHead(ctx, name); m > n {
			n, headErr = m, err
		}
	}
	var bad *BaseError
	live := true
	switch {
	case errors.As(headErr, &bad):
		// A base above the head that no removal writes (ReadHead applies
		// gc's rule): every reader and gc refuse it. It is no floor.
		v.damage(v.r.BaseMarkerKey(ctx, name), name, headErr, effectBase)
		floor = 0
	case n < floor && headErr != nil:
		// Removed: its history is empty, but its newest slot (the
		// tombstone, or the last step of a session an older cairn
		// removed) is read by sessions, du and gc, which refuse a bad
		// one; so is it here.
		v.damage(StepKey(name, n), fmt.Sprintf("%s@%d", name, n), headErr, effectTombstone)
		live = false
	case n < floor:
		live = false // removed
	}
	v.rest(ctx, name, n, floor)
	return live
}

// rest checks session's marker and head hint, and walks its steps from
// its head, n, down to floor. A floor of 0 says the base marker is
// damaged and gives none (it was reported): then the walk goes down as
// far as the steps read. A step the store does not hold is then either
// lost or below the session's real base, pruned and swept, which only the
// marker could say; the walk reports it and goes on below it when the
// store says it was history (see lost), and otherwise ends there,
// reporting nothing for it. That bounds the walk by what the store holds,
// not by the step numbers, and every other problem of the session is
// still found in the same run.
func (v *verifier) rest(ctx context.Context, name string, n, floor uint64) {
	if err := v.r.CheckMarker(ctx, name); errors.Is(err, cas.ErrNotFound) {
		v.damage(SessionKey(name), name, err, effectNoMarker)
	} else if err != nil {
		v.damage(SessionKey(name), name, err, effectMarker)
	}
	if err := v.r.CheckHint(ctx, name, n); err != nil {
		v.damage(HintKey(name), name, err, effectHint)
	}
	if err := v.r.CheckBaseMarkers(ctx, name); err != nil {
		v.problem(BaseKey(name), name, err)
	}
	if floor == 0 {
		v.chain(ctx, name, n, 1, nil, true)
		return
	}
	v.chain(ctx, name, n, floor, nil, false)
}

// chain walks a chain of steps down from session@n, across forks, checking
// each manifest against the hash its child recorded. A step that cannot
// be read does not stop the walk within its session: its number says
// where its parent is. If untilGone (the base marker gives no floor), a
// step the store does not hold ends the walk, unreported, unless lost
// says it was part of the session's history (see rest); in the sessions
// the chain forks from, whose own walks have their floors, it always
// ends the walk.
func (v *verifier) chain(ctx context.Context, session string, n, floor uint64, want *cas.ID, untilGone bool) {
	own := session
	var named map[string]bool // untilGone: step objects the layouts of the steps read name
	missing := false          // the step above was missing too: report a gap once
	unread := false           // the step above could not be read, so its parent is not known
	for n > 0 && n >= floor {
		key := StepKey(session, n)
		// Shared history already checked, down to the floor it was
		// walked to: only a walk with a lower floor (a fork whose history
		// goes below its origin's base) goes on, checking what is new.
		done, seen := v.steps[key]
		if seen && done <= floor {
			return
		}
		v.steps[key] = floor
		ref := fmt.Sprintf("%s@%d", session, n)
		st, err := v.r.ReadStep(ctx, session, n)
		if err != nil {
			gone := errors.Is(err, cas.ErrNotFound)
			if gone && untilGone && (session != own || !v.lost(ctx, session, n, named)) {
				return
			}
			if gone && unread && !v.heldBelow(ctx, session, n) {
				// The step above, unreadable, may have been the session's
				// first (a fork's, whose parent is in another session):
				// nothing of the session lies below it to call lost.
				return
			}
			if !seen && (!gone || !missing) {
				v.damage(key, ref, err, v.stepEffect(ctx, session, n, want, gone))
			}
			missing, unread = gone, !gone
			n, want = n-1, nil
			continue
		}
		missing, unread = false, false
		if want != nil && st.ID != *want {
			v.problem(key, ref, fmt.Errorf("%w: manifest hashes to %s, but its child names %s", cas.ErrCorrupt, st.ID.Short(), want.Short()))
		}
		if !seen {
			v.rep.Steps++
			v.count(st.Key) // read whole and checked by ReadStep
			v.step(ctx, st, ref)
		}
		if untilGone && session == own {
			if named == nil {
				named = map[string]bool{}
			}
			for _, k := range LayoutKeys(st.Layout) {
				named[k] = true
			}
		}
		if st.Parent == nil {
			return
		}
		id := st.Parent.ID
		session, n, want = st.Parent.Session, st.Parent.Number, &id
	}
}

// lost reports whether step n of session, which the store does not hold
// and whose base marker gives no floor, was part of the session's
// history, so that its absence is damage. It was if a layout of a step
// the walk read above it names its object (named): a step's layout keeps
// what it names, and that was reported missing too. It was also if the
// store still holds a step of the session below it that a prune would
// not have left: below its base gc keeps only the steps a live layout
// names and those a fork's history, a fork's layout or a fork pin reaches
// (see reachedFromOthers), and sweeps the rest oldest first, so such a
// step says that n is above the base. Otherwise (a session's oldest steps
// missing with nothing of it below them, or only such kept steps, or a
// tombstone) it may be a prune, and is not reported; nor is it if what
// other sessions reach cannot be read.
func (v *verifier) lost(ctx context.Context, session string, n uint64, named map[string]bool) bool {
	if named[StepKey(session, n)] {
		return true
	}
	held := v.held(ctx, session)
	// The highest step below n that no checked layout names and that is
	// no tombstone: below a tombstone lies a removed past of the name,
	// never the history of a step above it (a removal's tombstone is kept
	// by gc while it is the newest slot, a revived name's first step has
	// no parent). Only then is it worth finding out what other sessions
	// reach.
	i := sort.Search(len(held), func(i int) bool { return held[i] >= n })
	for i--; i >= 0; i-- {
		k := held[i]
		if key := StepKey(session, k); named[key] || v.objects[key] {
			continue
		}
		st, err := v.r.ReadStep(ctx, session, k)
		if err != nil {
			continue // says nothing; reported if the walk gets there
		}
		if IsTombstone(st.Manifest) {
			return false
		}
		reached, known := v.reachedFromOthers(ctx, session)
		return known && k > reached
	}
	return false
}

// stepEffect says what the damage to step n of session, which could not
// be read whole, means: whether gc refuses to run, found by reading the
// step as gc's mark does (its manifest and index, checked against the
// hash its child recorded, want, or the whole object for a head).
func (v *verifier) stepEffect(ctx context.Context, session string, n uint64, want *cas.ID, gone bool) string {
	if gone {
		return effectStep
	}
	cr := newChainReader(v.r)
	if _, err := cr.read(ctx, session, n, want); err == nil {
		return effectStepData
	}
	return effectStep
}

// held returns the step numbers of session the store holds, ascending,
// listed once per run; nil if the listing fails (no evidence), an empty
// list if it holds none.
func (v *verifier) held(ctx context.Context, session string) []uint64 {
	held, ok := v.stored[session]
	if ok {
		return held
	}
	err := v.r.listKeys(ctx, sessionStepsPrefix(session), "", func(i cas.Info) error {
		if s, k, ok := ParseStepKey(i.Key); ok && s == session {
			held = append(held, k)
		}
		return nil
	})
	switch {
	case err != nil:
		held = nil // no evidence
	case held == nil:
		held = []uint64{}
	}
	if v.stored == nil {
		v.stored = map[string][]uint64{}
	}
	v.stored[session] = held
	return held
}

// heldBelow reports whether the store holds a step of session below n,
// or could not be listed (then it may).
func (v *verifier) heldBelow(ctx context.Context, session string, n uint64) bool {
	held := v.held(ctx, session)
	return held == nil || len(held) > 0 && held[0] < n
}

// reachedFromOthers returns the highest step of session that another
// session's history, its layouts or a fork pin may reach, and whether
// that could be found out. A session's history enters another session
// only at its oldest step, a fork's first, whose parent is in the session
// it was forked from and which copies the layout of the step it forks,
// its origin (a fork's later layouts name no older step of that
// session); a pin keeps its source's chain from the forked step down.
// Read once per run, only when a gap needs it.
func (v *verifier) reachedFromOthers(ctx context.Context, session string) (uint64, bool) {
	if v.entries == nil {
		v.entries = map[string]uint64{}
		v.unread = map[string]bool{}
		enter := func(s string, n uint64) {
			if n > v.entries[s] {
				v.entries[s] = n
			}
		}
		seen := map[string]bool{}
		each := func(s string) error {
			if seen[s] {
				return nil
			}
			seen[s] = true
			first, err := v.r.FirstStep(ctx, s)
			if err != nil {
				v.unread[s] = true
				return nil
			}
			if first == 0 {
				return nil
			}
			st, err := v.r.ReadStep(ctx, s, first)
			switch {
			case errors.Is(err, cas.ErrNotFound):
			case err != nil:
				v.unread[s] = true
			default:
				for _, p := range []*Pointer{st.Parent, st.Origin} {
					if p != nil && p.Session != s {
						enter(p.Session, p.Number)
					}
				}
			}
			return nil
		}
		if err := v.r.Sessions(ctx, each); err != nil {
			v.unread[""] = true
		}
		if err := v.r.StepSessions(ctx, each); err != nil {
			v.unread[""] = true
		}
		pins, err := v.r.Pins(ctx)
		if err != nil {
			v.unread[""] = true
		}
		for _, p := range pins {
			if p.Pin != nil {
				enter(p.Pin.Source, p.Pin.Step)
			}
		}
	}
	for s := range v.unread {
		if s != session {
			// Its history may enter this session anywhere.
			return 0, false
		}
	}
	return v.entries[session], true
}

// step checks every object of a step's layout and every blob its state
// reaches. The blobs are read through a View of the layout's objects
// that could be read, as show and diff read them: each object's table is
// built once per run, where an Index loaded for each step rebuilt the
// map of every blob of its layout, which grows with the history (80 s
// to verify a 100,000-step session, most of it filling maps).
func (v *verifier) step(ctx context.Context, st *Step, ref string) {
	repo := v.r
	var readable Layout
	v.unloaded = false
	for _, key := range LayoutKeys(st.Layout) {
		one := Layout{}
		if s, n, ok := ParseStepKey(key); ok {
			one.Steps = []Range{{Session: s, First: n, Last: n}}
		} else if s, n, ok := ParsePackKey(key); ok {
			one.Packs = []PackRef{{Session: s, Number: n, Level: 1}}
		} else if s, n, k, ok := ParseSpillKey(key); ok {
			one.Spills = []SpillRef{{Session: s, Number: n, First: k, Last: k}}
		}
		if _, err := repo.View(ctx, one); err != nil {
			if !v.objects[key] {
				effect := ""
				if len(one.Steps) == 0 && errors.Is(err, cas.ErrNotFound) {
					effect = effectPackGone
				}
				v.damage(key, ref, err, effect)
			}
			v.objects[key] = true
			v.unloaded = true
			continue
		}
		readable.Steps = append(readable.Steps, one.Steps...)
		readable.Packs = append(readable.Packs, one.Packs...)
		readable.Spills = append(readable.Spills, one.Spills...)
		if !v.objects[key] {
			v.objects[key] = true
			v.count(key)
			// Every copy of every blob, live or not: the walk below
			// reads each id from one object only.
			if _, err := repo.CheckObject(ctx, key, func(err error) { v.problem(key, ref, err) }); err != nil {
				v.problem(key, ref, err)
			}
		}
	}
	ix, err := repo.View(ctx, readable)
	if err != nil {
		// Each was read just now; one that fails again is still damage.
		v.problem(st.Key, ref, err)
		return
	}
	before := len(v.rep.Problems)
	v.walk(ctx, ix, st.Root, ref, 0)
	if st.Kind == StateDir && len(v.rep.Problems) == before {
		// Names, nesting and symlinks, exactly as show and checkout
		// check them (they refuse what this reports). A tree already
		// found damaged above is not reported twice.
		r := &tree.Reader{Src: ix}
		if err := r.CheckDir(ctx, st.Root); err != nil {
			v.problem(st.Key, ref, err)
		}
	}
}

// walk re-hashes every blob and node below root, reporting each bad one
// and going on with its siblings.
func (v *verifier) walk(ctx context.Context, ix *View, root tree.Ref, ref string, depth int) {
	if root.Kind == tree.Inline {
		return
	}
	if v.blobs[root.ID] {
		// Re-hashed already, through another step's layout: a reader of
		// this step finds it only in this step's layout, which must hold
		// it too (every object's table is loaded: a lookup, no read).
		if _, _, ok := ix.locate(root.ID); !ok && !v.unloaded {
			if _, err := ix.Blob(ctx, root.ID); err != nil {
				v.problem("", ref, err)
			}
		}
		return
	}
	v.blobs[root.ID] = true
	v.rep.Blobs++
	raw, err := ix.Blob(ctx, root.ID)
	if err != nil {
		key := locKey(ix, root.ID)
		if key == "" && v.unloaded {
			// Its object is one of the step's layout that could not be
			// read, already reported: "not in any object of the step's
			// layout" would be a second, untrue fault.
			return
		}
		v.problem(key, ref, err)
		return
	}
	if root.Kind != tree.Node {
		return
	}
	if max := v.r.depthBound(); depth > max {
		// As show and du refuse it: the workspace's limit, not the
		// default, so verify checks what readers will read.
		v.problem(locKey(ix, root.ID), ref, &tree.LimitError{Limit: "MaxDepth", Max: int64(max), What: "tree nesting", Unit: "levels"})
		return
	}
	n, err := tree.DecodeNode(raw, "node "+root.ID.Short())
	if err != nil {
		v.problem(locKey(ix, root.ID), ref, err)
		return
	}
	for _, e := range n.Entries {
		v.walk(ctx, ix, e.Ref, ref, depth+1)
	}
}

func locKey(ix *View, id cas.ID) string {
	if key, _, ok := ix.locate(id); ok {
		return key
	}
	return ""
}

// CheckHint reads a session's head hint, if any, and reports an error if
// it is not a step number or names a step beyond head. A missing hint is
// fine: sessions shorter than HintEvery have none.
func (r *Repo) CheckHint(ctx context.Context, session string, head uint64) error {
	key := HintKey(session)
	b, err := r.store.Get(ctx, key, 0, 64)
	if errors.Is(err, cas.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", DescribeKey(key), err)
	}
	n, perr := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	switch {
	case perr != nil || n == 0:
		return fmt.Errorf("%w: %s holds %q, not a step number", cas.ErrCorrupt, DescribeKey(key), b)
	case n > head:
		return fmt.Errorf("%w: %s names step %d, but the newest step is %d: a step is missing", cas.ErrCorrupt, DescribeKey(key), n, head)
	}
	return nil
}

// CheckMarker reports an error if session's marker is missing or does not
// hold the session's name.
func (r *Repo) CheckMarker(ctx context.Context, session string) error {
	key := SessionKey(session)
	b, err := r.store.Get(ctx, key, 0, 1024)
	if errors.Is(err, cas.ErrNotFound) {
		return fmt.Errorf("%s: %w", DescribeKey(key), cas.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", DescribeKey(key), err)
	}
	if string(b) != session {
		return fmt.Errorf("%w: %s holds %q, not the session's name", cas.ErrCorrupt, DescribeKey(key), b)
	}
	return nil
}

// CheckObject reads the object at key and decodes and re-hashes every
// blob it holds, calling bad for each that fails. Its error is for the
// object as a whole (missing, too large, or failing its checksum).
func (r *Repo) CheckObject(ctx context.Context, key string, bad func(error)) (blobs int, err error) {
	obj, err := r.object(ctx, key)
	if err != nil {
		return 0, err
	}
	for _, e := range obj.Entries {
		if _, err := obj.Blob(e); err != nil {
			bad(err)
		}
	}
	return len(obj.Entries), nil
}
