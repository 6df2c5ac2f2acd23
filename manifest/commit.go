package manifest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/manifest/tree"
)

// The write path. Commit, Fork and writeTombstone are the only ways a
// step object comes to be; each ends in WriteStep's conditional put, so
// a step is acknowledged only when that put returns (I2) and a slot is
// written at most once (I3), tombstones included.

// ErrSlotTaken reports that another writer already wrote the step slot.
var ErrSlotTaken = errors.New("step slot already written")

// processWriter names this process in the manifests it writes (host and
// pid), so a fenced-out writer can be told who holds the session.
var processWriter = func() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("%s/%d", h, os.Getpid())
}()

// ProcessWriter returns the name this process writes into the manifests
// it writes (Manifest.Writer): its host name and process id.
func ProcessWriter() string { return processWriter }

// CommitInput is what a commit adds after its parent step.
type CommitInput struct {
	Session string
	// Build builds the step's state into sink, which keeps the blobs the
	// parent's layout does not already hold, and returns its kind and root.
	// known reports whether the writer's index (the parent's layout, loaded)
	// holds a blob or node: a build that reuses refs it did not hash this
	// time, such as a stat cache's (tree.DirOptions.Known), may reuse only
	// those, so a stale cache never names a blob the step cannot reach.
	Build func(sink tree.Sink, known func(cas.ID) bool) (StateKind, tree.Ref, error)
	// Record is the step record as compact JSON (may be empty), at most
	// MaxRecordSize bytes.
	Record []byte
	Status Status
	// Fanout is the compaction fanout (see DefaultFanout; < 2: none).
	Fanout int
	// Check, if set, runs right before the step object's conditional
	// put, once the build, its spill packs and any compaction are done:
	// an error stops the commit there, its step unwritten (a spill pack
	// already written is an orphan for gc, as after a crash). The writer
	// checks there that the head it builds on is still one it may trust
	// (HeadTrust): a build can take long, and a writer can be paused
	// anywhere in it.
	Check func(ctx context.Context) error
	// First is the number of a session's first step (head nil): the
	// session's base when it has one but no step, else 0 or 1 (step 1).
	// A fork that died after setting its new name's base (the base of
	// its source) and before its step leaves such a base; a first step
	// below it would lie outside the session's history.
	First uint64
	// IdempotencyKey, if set, is stored with the step
	// (Manifest.IdempotencyKey; ValidIdempotencyKey says which keys are
	// valid). A commit that loses its slot to a step with the same key
	// reads that step: if the commit retries it (Manifest.Retries) the
	// commit, having written nothing, answers with a *ReplayedError
	// naming it; otherwise with a *KeyUsedError. Both only on that path,
	// which reads the slot anyway.
	IdempotencyKey string
}

// KeyUsedError is Commit's error when the slot the commit lost holds a
// step written with the commit's idempotency key but with another
// parent, state, record or status: the key was used for another step.
// It matches ErrSlotTaken.
type KeyUsedError struct {
	// Step is the step that holds the slot.
	Step *Step
}

func (e *KeyUsedError) Error() string {
	return fmt.Sprintf("idempotency key %q was used for step %s@%d, which has another parent, state, record or status", e.Step.IdempotencyKey, e.Step.Session, e.Step.Number)
}

// Unwrap returns ErrSlotTaken.
func (e *KeyUsedError) Unwrap() error { return ErrSlotTaken }

// Commit writes the step after head (nil: the session's first step) and
// returns it. The sequence is the commit protocol:
//
//  1. load ix (the writer's dedup index) with every object of head's layout;
//  2. build the state, keeping only blobs ix does not hold; once the new
//     file chunks pass SpillThreshold they are written to spill packs
//     (conditional creates) while the build goes on (spill.go);
//  3. if compaction is due (and nothing spilled), add the merged blobs
//     to the step's (compact.go); for a first step, write the session
//     marker instead;
//  4. write the step object (manifest + new blobs + merged blobs) with
//     one conditional put: the step is acknowledged when it returns (I2,
//     I3);
//  5. update ix, and every HintEvery steps rewrite the head hint.
//
// A crash at any point leaves the session at its last acknowledged step;
// a spill pack written before the crash is an orphan for GC, never
// corruption (I4). If another writer holds the slot the error wraps
// ErrSlotTaken and nothing of this attempt is visible; ix then no longer
// matches the store and the caller must drop it with its head. If the
// holder is an earlier try of this very commit (in.IdempotencyKey), the
// error is a *ReplayedError naming it; ix then matches head, not it.
func (r *Repo) Commit(ctx context.Context, head *Step, ix *Index, in CommitInput) (*Step, error) {
	if len(in.Record) > MaxRecordSize {
		return nil, fmt.Errorf("step record of %d bytes exceeds %d: %w", len(in.Record), MaxRecordSize, tree.ErrLimit)
	}
	if ix == nil {
		ix = r.NewIndex()
	}
	n := max(1, in.First)
	if head != nil {
		n = head.Number + 1
		// Dedup against every blob the parent's state may use.
		if err := ix.Load(ctx, head.Layout); err != nil {
			return nil, fmt.Errorf("load parent index: %w", err)
		}
	}
	var b pack.Builder
	sp := r.newSpiller(ctx, in.Session, n, ix, &b)
	defer sp.abort()
	kind, root, err := in.Build(sp, ix.Has)
	if err != nil {
		return nil, err
	}
	spills, err := sp.finish()
	if err != nil {
		return nil, err
	}
	m := &Manifest{
		Session: in.Session, Number: n, Time: time.Now().UTC(), Status: in.Status,
		Writer: processWriter, Record: in.Record, Kind: kind, Root: root,
		IdempotencyKey: in.IdempotencyKey,
	}
	var done *compaction
	if head != nil {
		// A tombstone's step begins a new history for the name: it
		// links to no removed session's steps, so a log ends at it
		// rather than reading as pruned once gc sweeps the tombstone.
		if p := head.Pointer(); !IsTombstone(head.Manifest) {
			m.Parent = &p
		}
		m.Layout = head.Layout.clone()
		// A step that spilled is not the one to compact: compaction
		// merges its objects' blobs in memory, and its spill packs are
		// written already. The next step compacts its nodes.
		if in.Fanout > 1 && len(spills) == 0 {
			c, err := r.compact(ctx, in.Session, n, m.Layout, root, ix, &b, in.Fanout)
			if err != nil {
				return nil, err
			}
			if c != nil {
				// The merged blobs ride in the step object, which names
				// itself as the pack. Compaction leaves spill packs where
				// they are.
				done, m.Layout = c, c.layout
				m.Layout.Spills = head.Layout.clone().Spills
				if c.blobs != nil {
					m.Copies = uint64(b.Merge(c.blobs))
				}
			}
		}
	} else if err := r.MarkSession(ctx, in.Session); err != nil {
		return nil, err
	}
	if b.Len() > 0 && (done == nil || done.blobs == nil) {
		m.Layout.Steps = appendRange(m.Layout.Steps, in.Session, n)
	}
	m.Layout.Spills = append(m.Layout.Spills, spills...)
	if in.Check != nil {
		if err := in.Check(ctx); err != nil {
			return nil, err
		}
	}
	st, entries, err := r.WriteStep(ctx, m, &b)
	if errors.Is(err, ErrSlotTaken) && m.IdempotencyKey != "" {
		return nil, r.retried(ctx, m, err)
	}
	if err != nil {
		return nil, err
	}
	// The step object's figures (st.Blobs, st.Size) leave out its
	// spill packs, as they do when the step is read back.
	for _, w := range sp.written {
		ix.Add(w.key, w.entries)
	}
	if done != nil {
		done.located(entries)
		ix.compacted(done)
	}
	ix.Add(st.Key, entries)
	ix.wrote(m.Layout)
	if n%HintEvery == 0 {
		// Only a hint: a failure costs the next resumer one longer LIST.
		_ = r.writeHint(ctx, in.Session, n)
	}
	return st, nil
}

// retried is the answer of a commit with an idempotency key that lost
// its slot (taken, the put's error): the step in the slot if the commit
// retries it (a *ReplayedError), a *KeyUsedError if that step has the
// same key and is another, else taken. It reads the slot, on this path
// only.
func (r *Repo) retried(ctx context.Context, m *Manifest, taken error) error {
	held, err := r.ReadStep(ctx, m.Session, m.Number)
	switch {
	case err != nil || held.IdempotencyKey != m.IdempotencyKey:
		return taken
	case m.Retries(held.Manifest):
		return &ReplayedError{Step: held}
	}
	return &KeyUsedError{Step: held}
}

// ReplayedError is Commit's answer when the slot it lost holds an
// earlier try of the same commit (same idempotency key, parent, state,
// record and status; Manifest.Retries): Step is that step, written
// before, and the commit wrote nothing. It is a success for the caller,
// who asked for exactly that step; it is an error so that no caller
// takes it for a step this commit wrote (above all not for its index).
type ReplayedError struct {
	// Step is the step the earlier try wrote.
	Step *Step
}

func (e *ReplayedError) Error() string {
	return fmt.Sprintf("step %s@%d was already written by an earlier try of this commit", e.Step.Session, e.Step.Number)
}

// ErrPruned reports a step below its session's base: no longer part of
// its history.
var ErrPruned = errors.New("pruned")

// Fork writes the first step of session to: a copy of step from with
// from as its origin, sharing all of from's data (no blob is copied). It
// fails with ErrSlotTaken if the slot is taken, and with ErrPruned if
// from is below the base of session via.
//
// via is the session whose history from was read in: from's own session,
// or a fork whose history goes down through from (HistoryStep), which
// holds it whether or not from's own session has since pruned it or been
// removed. The new session's history ends where via's history ends: its
// base marker is set to via's base before its first step, so log, verify
// and gc never walk into steps via pruned. Before it reads that base the
// fork writes a pin (see Pin), which gc honours until the fork's slot is
// taken, so a forker paused for any time either names only data that
// still exists or loses its slot to gc's fence. (gc keeps via's history
// down to its base, from included, for as long as the base is not above
// from; the pin keeps it once it is.)
//
// check, if not nil, runs right before the fork's step is put, as
// CommitInput.Check: an error stops the fork there, its step unwritten.
func (r *Repo) Fork(ctx context.Context, from *Step, via, to string, check func(context.Context) error) (*Step, error) {
	floor, err := r.ReadBase(ctx, via)
	if err != nil {
		return nil, err
	}
	if from.Number < floor {
		return nil, prunedFrom(from, via, floor)
	}
	pin, err := r.WritePin(ctx, &Pin{Target: to, Step: from.Number, Source: from.Session,
		ID: from.ID.String(), Floor: floor, Time: time.Now().UTC()})
	if err != nil {
		return nil, err
	}
	// Whatever happens next the pin is done with; one left behind by a
	// crash is expired by gc.
	defer r.DeletePin(context.WithoutCancel(ctx), pin)
	unlock, err := r.lockForks(ctx, to, pin)
	if err != nil {
		return nil, err
	}
	defer unlock()
	// Under the pin: if the source is still in via's history now, gc
	// keeps its chain down to the pin's floor until our slot is taken.
	if floor, err = r.ReadBase(ctx, via); err != nil {
		return nil, err
	}
	if from.Number < floor {
		return nil, prunedFrom(from, via, floor)
	}
	own, err := r.ReadBase(ctx, to)
	if err != nil {
		return nil, err
	}
	if own > from.Number {
		// A base only rises: the step would lie below it.
		return nil, &NameTakenError{Session: to, Number: from.Number, First: own}
	}
	// undo takes back the base this fork set, if it loses before its
	// step is put: it must not stay above a step a writer puts in the
	// name meanwhile (a first step waits for this fork's pin to go, then
	// reads the base).
	undo := func() {}
	if own < floor {
		// Not over the base of a session a writer has created since the
		// fork began (see the check before the put).
		if err := r.nameStillFree(ctx, to, from.Number); err != nil {
			return nil, err
		}
		created, err := r.writeBase(ctx, to, floor)
		if err != nil {
			return nil, err
		}
		undo = func() { r.lowerOwnBase(context.WithoutCancel(ctx), to, floor, own, created) }
	}
	origin := from.Pointer()
	m := &Manifest{
		Session: to, Number: from.Number, Parent: from.Parent, Origin: &origin,
		Time: time.Now().UTC(), Status: from.Status, Writer: processWriter, Record: from.Record,
		Kind: from.Kind, Root: from.Root, Layout: from.Layout.clone(), Truncated: from.Truncated,
	}
	if err := r.MarkSession(ctx, to); err != nil {
		undo()
		return nil, err
	}
	if check != nil {
		if err := check(ctx); err != nil {
			undo()
			return nil, err
		}
	}
	// The name was empty when the fork began; a writer may have created
	// it since (gc keeps this fork's pin for such a name rather than
	// fence it). Its steps lie below our slot, which would hide them:
	// the fork loses, as to a taken slot. One LIST; what lands between
	// it and the put is the race docs/maintenance.md names.
	if err := r.nameStillFree(ctx, to, m.Number); err != nil {
		undo()
		return nil, err
	}
	st, _, err := r.WriteStep(ctx, m, nil)
	if errors.Is(err, ErrSlotTaken) {
		undo()
	}
	if err != nil {
		return nil, err
	}
	// Forks to one name go one at a time (lockForks), but one that held
	// the lock so long that it was taken over may land above this step.
	head, err := r.FindHead(ctx, to)
	if err != nil {
		return nil, fmt.Errorf("fork to %s@%d: %w: %w", to, m.Number, ErrUnchecked, err)
	}
	if head > m.Number {
		return nil, &ForkHiddenError{Session: to, Number: m.Number, Head: head}
	}
	return st, nil
}

// PrunedError is Fork's error for a source below the base of Via, the
// session whose history it was read in: that history starts at step
// Start now. It matches ErrPruned.
type PrunedError struct {
	// From is the step forked from.
	From Pointer
	// Via is the session whose history From was read in.
	Via string
	// Start is the base of Via: the step its history starts at.
	Start uint64
}

// Error says the step, the history it was read in and where that
// history starts.
func (e *PrunedError) Error() string {
	if e.Via == e.From.Session {
		return fmt.Sprintf("%s@%d: %v (the session's history starts at step %d)", e.From.Session, e.From.Number, ErrPruned, e.Start)
	}
	return fmt.Sprintf("%s@%d, step %d of %s: %v (the history of %s starts at step %d now)", e.From.Session, e.From.Number, e.From.Number, e.Via, ErrPruned, e.Via, e.Start)
}

// Is reports whether target is ErrPruned.
func (e *PrunedError) Is(target error) bool { return target == ErrPruned }

// prunedFrom is Fork's error for a source below the base of via, the
// session whose history it was read in.
func prunedFrom(from *Step, via string, floor uint64) error {
	return &PrunedError{From: from.Pointer(), Via: via, Start: floor}
}

// ErrUnchecked reports a step that was written but whose place in its
// session's history could not be checked after its put (the store could
// not be read): whether it stays is not known.
var ErrUnchecked = errors.New("the step was written, but the session could not be read to check it is in its history")

// ForkHiddenError is Fork's error when another fork to the same name,
// from a later step, landed above the fork's step: that one is the
// session's head, and this step is in no history. It matches
// ErrSlotTaken.
type ForkHiddenError struct {
	Session      string
	Number, Head uint64
}

func (e *ForkHiddenError) Error() string {
	return fmt.Sprintf("fork to %s@%d: another fork to %s landed above it, at step %d", e.Session, e.Number, e.Session, e.Head)
}

// Unwrap returns ErrSlotTaken.
func (e *ForkHiddenError) Unwrap() error { return ErrSlotTaken }

// nameStillFree fails with ErrSlotTaken if the fork's name has any step:
// it had none when the fork began, so a writer created it since (or gc
// fenced the fork's slot n).
func (r *Repo) nameStillFree(ctx context.Context, to string, n uint64) error {
	first, err := r.FirstStep(ctx, to)
	if err != nil {
		return err
	}
	if first != 0 {
		return &NameTakenError{Session: to, Number: n, First: first}
	}
	return nil
}

// NameTakenError is Fork's error when its target name has steps: another
// writer created the session while the fork ran. It matches ErrSlotTaken.
type NameTakenError struct {
	Session       string
	Number, First uint64
}

func (e *NameTakenError) Error() string {
	return fmt.Sprintf("fork to %s@%d: the name has step %d now", e.Session, e.Number, e.First)
}

// Unwrap returns ErrSlotTaken.
func (e *NameTakenError) Unwrap() error { return ErrSlotTaken }

// StepPutError is WriteStep's error when the step object's put failed
// for another reason than the slot being taken: the put may still have
// reached the store, so whether the step exists is unknown until its
// slot is read again. Any other error of a commit left the step unwritten.
type StepPutError struct{ Err error }

func (e *StepPutError) Error() string { return e.Err.Error() }

// Unwrap returns the put's error.
func (e *StepPutError) Unwrap() error { return e.Err }

// WriteStep writes m with the new blobs in b as one step object, created
// only if the slot is free (I2, I3). It returns ErrSlotTaken (wrapping
// cas.ErrExists) if another writer holds the slot; nothing of this
// attempt is then visible. It is the primitive under Commit and Fork,
// exported for tools and tests that craft steps; it writes m as given.
func (r *Repo) WriteStep(ctx context.Context, m *Manifest, b *pack.Builder) (*Step, []pack.Entry, error) {
	if b == nil {
		b = &pack.Builder{}
	}
	key := StepKey(m.Session, m.Number)
	// Never acknowledge a step its readers would refuse.
	if err := m.Layout.Check(m.Number); err != nil {
		return nil, nil, fmt.Errorf("write %s: %w", DescribeKey(key), err)
	}
	mb := m.Encode()
	data, entries := b.Build(pack.KindStep, mb)
	if err := r.store.Put(ctx, key, data, cas.PutOptions{IfAbsent: true}); err != nil {
		if errors.Is(err, cas.ErrExists) {
			return nil, nil, fmt.Errorf("write %s: %w: %w", DescribeKey(key), ErrSlotTaken, cas.ErrExists)
		}
		return nil, nil, &StepPutError{fmt.Errorf("write %s: %w", DescribeKey(key), err)}
	}
	// The writer's next compaction merges this object: keep it at hand,
	// and on disk for a writer in a later process (a step object with no
	// blobs is in no layout, so never merged).
	r.remember(key, data)
	if len(entries) > 0 {
		r.keepLocal(key, data)
	}
	st := &Step{Manifest: m, ID: cas.Sum(mb), Key: key, ManifestBytes: int64(len(mb)), Size: int64(len(data))}
	st.countNew(entries)
	return st, entries, nil
}

// WriteHint records n as a recent head of session. It is only a hint;
// Commit writes it every HintEvery steps.
func (r *Repo) WriteHint(ctx context.Context, session string, n uint64) error {
	return r.writeHint(ctx, session, n)
}

func (r *Repo) writeHint(ctx context.Context, session string, n uint64) error {
	return r.store.Put(ctx, HintKey(session), []byte(strconv.FormatUint(n, 10)), cas.PutOptions{})
}

// MarkSession records that session exists, for listing sessions without
// listing every step. It is idempotent. Commit and Fork call it before a
// session's first step; it is exported for tools and tests that craft steps.
func (r *Repo) MarkSession(ctx context.Context, session string) error {
	if err := r.store.Put(ctx, SessionKey(session), []byte(session), cas.PutOptions{}); err != nil {
		return fmt.Errorf("mark session %s: %w", session, err)
	}
	return nil
}

// tombstoneRecord is the step record of a tombstone.
const tombstoneRecord = `{"cairn":"removed"}`

// IsTombstone reports whether m is a tombstone: the step GC puts into
// the slot above the last step of a removed session (or into the slot of
// a fork whose pin expired), with the session's base above it. It has no
// parent, no blobs and an empty layout, so a later commit to the same
// name builds on nothing, and it fences the slot: a writer or forker
// that still wanted it loses its conditional put.
func IsTombstone(m *Manifest) bool {
	return m.Parent == nil && m.Origin == nil && len(m.Layout.Packs) == 0 && len(m.Layout.Steps) == 0 && len(m.Layout.Spills) == 0 &&
		string(m.Record) == tombstoneRecord
}

// writeTombstone creates a tombstone in slot n of session, only if the
// slot is free (else an error wrapping ErrSlotTaken and cas.ErrExists).
func (r *Repo) writeTombstone(ctx context.Context, session string, n uint64) error {
	key := StepKey(session, n)
	root, err := tree.BuildJSON([]byte("null"), sinkFunc(func(cas.ID, []byte) error {
		return errors.New("a null state has no blobs")
	}))
	if err != nil {
		return fmt.Errorf("tombstone %s: %w", DescribeKey(key), err)
	}
	m := &Manifest{
		Session: session, Number: n, Time: time.Now().UTC(), Status: Done,
		Writer: processWriter, Record: []byte(tombstoneRecord), Kind: StateJSON, Root: root,
	}
	if _, _, err := r.WriteStep(ctx, m, nil); err != nil {
		return fmt.Errorf("write tombstone: %w", err)
	}
	r.forget(key)
	return nil
}

// sinkFunc adapts a function to tree.Sink.
type sinkFunc func(cas.ID, []byte) error

func (f sinkFunc) Put(id cas.ID, raw []byte) error { return f(id, raw) }

// clone returns a copy of l that shares no slice with it.
// equal reports whether l and o name the same objects in the same order.
func (l Layout) equal(o Layout) bool {
	return slices.Equal(l.Packs, o.Packs) && slices.Equal(l.Steps, o.Steps) && slices.Equal(l.Spills, o.Spills)
}

func (l Layout) clone() Layout {
	return Layout{
		Packs:  append([]PackRef(nil), l.Packs...),
		Steps:  append([]Range(nil), l.Steps...),
		Spills: append([]SpillRef(nil), l.Spills...),
	}
}

// appendRange adds step n of session to rs, extending the last run if
// n follows it.
func appendRange(rs []Range, session string, n uint64) []Range {
	if k := len(rs); k > 0 && rs[k-1].Session == session && rs[k-1].Last+1 == n {
		rs[k-1].Last = n
		return rs
	}
	return append(rs, Range{Session: session, First: n, Last: n})
}
