package cairn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/internal/headcache"
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

// Session is one chain of steps, got from Workspace.Session (the zero
// Session, a nil *Session, and a copy of a Session value name none: their
// calls fail with ErrInvalid). Its methods are
// safe for concurrent use; commits through one *Session are serialised.
type Session struct {
	// self is the Session Workspace.Session made: a copy of the struct
	// (s2 := *s) is refused (enter), rather than committing beside the
	// original under a lock of its own, from a head the original no
	// longer knows is stale.
	self *Session
	ws   *Workspace
	name string

	mu sync.Mutex
	// head is the newest step this process knows of, with index covering
	// its layout (the writer's dedup set); nil until first needed. A
	// commit that loses a race clears both so the next one re-reads the
	// store.
	head  *manifest.Step
	index *manifest.Index
	// doc is the head's JSON document as this writer last stored it, so
	// that the next whole document or patch stores only what changed. It
	// is used only while its root is the head's root.
	doc *tree.Doc
	// cached says head and index came from the head cache (see
	// UseHeadCache) and the store has not confirmed them yet; stamp is
	// the session marker's stamp they were saved under. noCache: the
	// cache was consulted once; from then on this Session reads the store.
	// cacheBase is the cache's base file this Session last loaded or
	// saved, which its next save may keep (headcache.Save).
	cached, noCache bool
	stamp           string
	cacheBase       *headcache.Base
	// removed says head is the last step of a removed session (or the
	// tombstone fencing it): for Expect, such a session does not exist.
	removed bool
	// first is the number a first step takes (head nil): the session's
	// base as last read, or 0 (step 1). See manifest.CommitInput.First.
	first uint64
	// confirmed is when the store last confirmed head (a read of it, or
	// an acknowledged commit): a head held longer than
	// manifest.HeadTrust is checked against the store before a commit.
	confirmed time.Time
	// retryKey is the idempotency key of the commit in flight ("" if
	// none); retried is the step holding that key that the commit is
	// being built beside (see rewind), nil if none: head is then its
	// parent, not the store's head.
	retryKey string
	retried  *manifest.Step
}

// Name returns the session's name ("" for a nil or zero Session).
func (s *Session) Name() string {
	if s == nil {
		return ""
	}
	return s.name
}

// enter begins a call on the session (Workspace.enter) named by what,
// given ctx. A nil ctx fails it. A Session not got from
// Workspace.Session (a nil or zero Session) has no workspace: every
// call on it fails, saying so.
func (s *Session) enter(ctx context.Context, what string) error {
	if ctx == nil {
		return nilContext(what)
	}
	if s == nil {
		return invalid(fmt.Errorf("%s: no session (a nil *Session; a Session is made by Workspace.Session)", what))
	}
	if s.ws == nil {
		return invalid(errors.New("the session was not got from a workspace (a Session is made by Workspace.Session): it names no session to read or commit to"))
	}
	if s.self != s {
		return invalid(fmt.Errorf("%s: a copy of a Session value (use the *Session that Workspace.Session returned: a copy would commit beside it from a head it does not share)", what))
	}
	return s.ws.enter(what)
}

// CommitOptions describe a commit.
type CommitOptions struct {
	// Record is the step record, a JSON value saying what happened this
	// step (see docs/records.md and Record). Optional.
	Record json.RawMessage
	// Status of the loop after this step (default Running).
	Status Status
	// Expect, if set, makes the commit fail with ErrConflict unless the
	// session's head is step *Expect (0: the session must not exist).
	Expect *uint64
	// Reply says the step answers the question of a head that awaits
	// input (hitl.Reply sets it). Withdraw says the step withdraws that
	// question unanswered. Either fails with ErrConflict if the head does
	// not await input: there is nothing to answer or withdraw (the wrong
	// session, or someone answered first). A commit on a head that awaits
	// input with neither is refused with ErrConflict (ErrAwaitingInput):
	// the question would vanish from the inbox and its reply would fail;
	// so is asking twice. A caller that means "withdraw a question if one
	// is pending" commits with Withdraw and, on ErrNotAwaiting, again
	// without it.
	Reply, Withdraw bool
	// IdempotencyKey, if set, names this commit so that retrying it
	// lands one step, however often its answer was lost: 1 to 128
	// printable ASCII characters without spaces (a UUID, say), chosen
	// by the caller once per step and given again on every retry of it.
	// It is stored with the step. A commit whose key is the key of the
	// session's head (or, with Expect, of the step above the expected
	// head, or of the step that took the slot it wanted) and whose
	// parent, state, record and status are that step's writes nothing
	// and returns that step with Step.Replayed set; the same key with
	// anything else is ErrKeyUsed. The key is compared with those steps
	// only, never with older ones, and only on paths that read them
	// anyway: a commit that meets no such step costs what it would
	// without a key. See "Safe retries" in docs/reliability.md.
	IdempotencyKey string
}

// ExpectHead returns a pointer to n, for CommitOptions.Expect.
func ExpectHead(n uint64) *uint64 { return &n }

// ConflictError is returned (wrapping ErrConflict) when a commit or fork
// loses.
type ConflictError struct {
	Session string
	Number  uint64 // the number of the step the commit wanted
	Head    uint64 // the session's head as the loser saw it
	Holder  string // the writer holding step Number, if known
	Reason  string
	pause   bool // refused because the head awaits input
	keyUsed bool // the idempotency key was used for another step
	// noQuestion: a reply or withdrawal refused because the head awaits
	// no input
	noQuestion bool
	fence      bool // step Number is gc's tombstone
}

// Error says which step the commit or fork wanted, why it lost and, if
// known, who holds that step ("<nil>" for a nil *ConflictError).
func (e *ConflictError) Error() string {
	if e == nil {
		return "<nil>"
	}
	msg := fmt.Sprintf("conflict on %s@%d: %s", e.Session, e.Number, e.Reason)
	if e.Holder != "" {
		msg += " (held by " + e.Holder + ")"
	}
	return msg
}

// Unwrap makes errors.Is(err, ErrConflict) true, errors.Is(err,
// ErrAwaitingInput) for a commit refused on a head that awaits input,
// errors.Is(err, ErrNotAwaiting) for a reply or withdrawal refused on a
// head that does not, and errors.Is(err, ErrKeyUsed) for a commit whose
// idempotency key another step holds.
func (e *ConflictError) Unwrap() error {
	if e == nil {
		return nil
	}
	switch {
	case e.pause:
		return ErrAwaitingInput
	case e.keyUsed:
		return ErrKeyUsed
	case e.noQuestion:
		return ErrNotAwaiting
	}
	return ErrConflict
}

// checkPause refuses a commit that would bury an unanswered question, or
// a reply or withdrawal with no question to answer or withdraw. A
// refusal re-reads the head first: this process's view may be stale.
func (s *Session) checkPause(ctx context.Context, opts CommitOptions) error {
	bad := func() bool {
		awaiting := s.head != nil && s.head.Status == manifest.AwaitingInput
		return awaiting && !opts.Reply && !opts.Withdraw || !awaiting && (opts.Reply || opts.Withdraw)
	}
	if !bad() {
		return nil
	}
	if err := s.load(ctx, true); err != nil {
		return fmt.Errorf("commit %s: %w", s.name, err)
	}
	if !bad() {
		return nil
	}
	if s.retried != nil {
		// The step holding the commit's key was built on a head that
		// does (or does not) await input, where this commit cannot be:
		// it is no earlier try of this one.
		return s.keyUsed(s.retried)
	}
	e := &ConflictError{Session: s.name, Number: s.nextNum(), Head: s.headNum(), pause: !opts.Reply && !opts.Withdraw}
	e.noQuestion = !e.pause
	switch {
	case opts.Reply && s.head == nil:
		// No step 0 exists to name.
		e.Reason = fmt.Sprintf("session %s has no steps, so it does not await input: nothing to reply to", s.name)
	case opts.Reply:
		e.Reason = fmt.Sprintf("%s@%d does not await input: nothing to reply to", s.name, s.headNum())
	case opts.Withdraw:
		e.Reason = s.nothingToWithdraw(ctx)
	default:
		e.Reason = fmt.Sprintf("%s@%d awaits input: answer it (cairn reply %s --input JSON) or withdraw the question (commit --withdraw)", s.name, s.headNum(), s.name)
	}
	return e
}

// nothingToWithdraw says why a withdrawal finds no question at the head
// of s: the session has no steps, or was removed, or its head asks none.
// A head whose parent asked one answered or withdrew it, perhaps as an
// earlier try of this very commit whose answer was lost: the words say
// so, so that a retry is not read as a withdrawal that failed. That
// costs one GET, on this refusal only.
func (s *Session) nothingToWithdraw(ctx context.Context) string {
	switch {
	case s.removed:
		return fmt.Sprintf("session %s was removed, so it asks no question: nothing to withdraw", s.name)
	case s.head == nil:
		return fmt.Sprintf("session %s has no steps, so it asks no question: nothing to withdraw", s.name)
	}
	n := s.headNum()
	msg := fmt.Sprintf("step %d of session %s asks no question; nothing to withdraw", n, s.name)
	if n > 1 {
		if prev, err := s.ws.repo.ReadStep(ctx, s.name, n-1); err == nil && prev.Status == manifest.AwaitingInput {
			msg += fmt.Sprintf(" (the question of step %d was already answered or withdrawn by step %d, perhaps an earlier try of this commit)", n-1, n)
		}
	}
	return msg
}

// unsure builds the error of a failed commit (or fork: verb says which,
// as "commit" or "fork S@N to") and, unless the failure
// was bad input or damage, forgets the head, so that the next commit
// finds out whether the step landed and builds on whatever is there.
// Only a step put that failed after it may have reached the store
// (manifest.StepPutError) is ErrMaybeWritten; any other failure left the
// step unwritten and says only why.
func (s *Session) unsure(verb string, n uint64, err error) error {
	if errors.Is(err, cas.ErrCorrupt) || errors.Is(err, cas.ErrInvalidKey) || errors.Is(err, tree.ErrLimit) || !mayHaveLanded(err) {
		return fmt.Errorf("%s %s@%d: %w", verb, s.name, n, err)
	}
	// What the commit did to the index before it failed is not known
	// here: the next commit reads the head and its index again.
	s.head, s.index = nil, nil
	var put *manifest.StepPutError
	if !errors.As(err, &put) {
		return fmt.Errorf("%s %s@%d: %w", verb, s.name, n, err)
	}
	return fmt.Errorf("%s %s@%d: %w: its put failed after it may have reached the store: %w", verb, s.name, n, ErrMaybeWritten, err)
}

// load makes sure s.head reflects the store, reading it if unknown.
func (s *Session) load(ctx context.Context, refresh bool) error {
	// A loaded session has an index even when it has no steps yet, so a
	// writer that saw an empty session commits step 1 (and loses if
	// another writer got there first) instead of re-reading the head.
	if s.index != nil && !refresh {
		return s.rewind(ctx)
	}
	s.retried = nil
	if !refresh && s.loadCached(ctx) {
		return s.rewind(ctx)
	}
	s.cached, s.stamp = false, ""
	repo := s.ws.repo
	st, _, base, err := repo.ReadHead(ctx, s.name)
	if err != nil {
		return err
	}
	s.head, s.index, s.removed, s.first = nil, repo.NewIndex(), false, 0
	s.confirmed = s.ws.clock()
	if st == nil {
		s.first = base
		return nil
	}
	s.head, s.removed = st, st.Manifest.Number < base || manifest.IsTombstone(st.Manifest)
	return s.rewind(ctx)
}

// rewind prepares a commit with an idempotency key (retryKey) on a head
// that carries the same key: the head is an earlier try of this very
// commit whose answer was lost, or the key was used before. Either way
// the commit is built on the head's parent, as that try was, so that its
// put meets the head's slot, where manifest.Repo.Commit compares the
// two: the same commit is answered with the head, any other is
// ErrKeyUsed. Nothing is written over the head: its slot is taken.
func (s *Session) rewind(ctx context.Context) error {
	h := s.head
	if s.retryKey == "" || s.retried != nil || h == nil || s.removed || h.IdempotencyKey != s.retryKey {
		return nil
	}
	return s.rewindTo(ctx, h)
}

// rewindTo makes h, a step holding the commit's idempotency key, the one
// the commit is built beside: the session's head becomes h's parent. It
// reads that parent: one GET, on this path only.
func (s *Session) rewindTo(ctx context.Context, h *manifest.Step) error {
	s.retried, s.index = h, s.ws.repo.NewIndex()
	if h.Parent == nil {
		// A session's first step (or the first after a removal).
		s.head, s.first = nil, h.Number
		return nil
	}
	p, err := s.ws.repo.ReadStep(ctx, h.Parent.Session, h.Parent.Number)
	if err == nil && p.ID != h.Parent.ID {
		err = fmt.Errorf("%w: it is not the step %s@%d names as its parent", cas.ErrCorrupt, h.Session, h.Number)
	}
	if err != nil {
		s.head, s.index, s.retried = nil, nil, nil
		return fmt.Errorf("step %d holds idempotency key %q, and its parent, step %d, cannot be read to tell whether this commit is a retry of it: %w", h.Number, h.IdempotencyKey, h.Parent.Number, err)
	}
	s.head = p
	return nil
}

// Commit stores state as the next step of the session and returns it.
// It is acknowledged only when the step object's conditional put
// returned; if another writer got there first it returns an error
// wrapping ErrConflict and nothing it wrote is visible.
func (s *Session) Commit(ctx context.Context, state State, opts CommitOptions) (_ *Step, err error) {
	if err := s.enter(ctx, "commit "+s.Name()); err != nil {
		return nil, err
	}
	defer s.ws.exit()
	defer s.ws.classifyWrite(&err, "the step")
	if err := checkCommitInput(state, opts); err != nil {
		return nil, invalid(fmt.Errorf("commit %s: %w", s.name, err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.commit(ctx, state, opts)
	if errors.Is(err, errStaleHead) {
		// Started from a cached head that another machine had moved
		// past: once more from the store's head, which with Expect
		// fails as it would have without the cache.
		st, err = s.commit(ctx, state, opts)
	}
	return st, err
}

// checkCommitInput refuses, before anything is read or written, a
// commit's input that no store could hold: no state, or a status that is
// none of the three (the step would be written, then refused as corrupt
// by every reader).
func checkCommitInput(state State, opts CommitOptions) error {
	if ss, ok := state.(stepState); state == nil || ok && (ss.st == nil || ss.st.m == nil) {
		return errors.New("no state given")
	}
	switch d := state.(type) {
	case dirState:
		if d == "" {
			return errors.New("a directory state with no path (Dir(\"\"))")
		}
	case cachedDirState:
		if d.path == "" {
			return errors.New("a directory state with no path (DirWithCache(\"\", …))")
		}
	}
	if opts.Status > Done {
		return fmt.Errorf("unknown status %d (want Running, AwaitingInput or Done)", opts.Status)
	}
	if opts.Reply && opts.Withdraw {
		return errors.New("both Reply and Withdraw set: a step either answers the question or withdraws it")
	}
	if opts.IdempotencyKey != "" {
		if err := ValidIdempotencyKey(opts.IdempotencyKey); err != nil {
			return err
		}
	}
	return nil
}

func (s *Session) commit(ctx context.Context, state State, opts CommitOptions) (_ *Step, err error) {
	if path, _ := s.headCacheFile(); path != "" {
		defer headcache.Begin(path)()
	}
	s.retryKey, s.retried = opts.IdempotencyKey, nil
	defer func() {
		if s.retried != nil {
			// Built beside a step already written, and not answered with
			// it: the head held is that step's parent, not the store's.
			s.head, s.index, s.retried = nil, nil, nil
		}
		s.retryKey = ""
	}()
	// A directory with a stat cache starts its scan now, to overlap the
	// load of the head.
	var dirBuild *dirBuild
	if st, ok := state.(cachedDirState); ok {
		dirBuild = st.prepare(s.ws.cacheURL(), s.name)
		defer dirBuild.release()
	}
	if err := s.load(ctx, false); err != nil {
		return nil, fmt.Errorf("commit %s: %w", s.name, err)
	}
	if err := s.reconfirm(ctx); err != nil {
		return nil, err
	}
	if err := s.checkExpect(ctx, opts); err != nil {
		return nil, err
	}
	if err := s.checkPause(ctx, opts); err != nil {
		return nil, err
	}
	if err := checkReuse(state, s.head); err != nil {
		// Our view may be stale (the step is a head another writer
		// committed since): check the store before refusing.
		if err := s.load(ctx, true); err != nil {
			return nil, fmt.Errorf("commit %s: %w", s.name, err)
		}
		if err := checkReuse(state, s.head); err != nil {
			return nil, fmt.Errorf("commit %s: %w", s.name, err)
		}
	}
	// checkPause and checkReuse may have read the head again: the
	// expectation holds for the head the step is committed on.
	if err := s.checkExpect(ctx, opts); err != nil {
		return nil, err
	}
	var record []byte
	if len(opts.Record) > 0 {
		if err := checkUTF8(opts.Record); err != nil {
			return nil, invalid(fmt.Errorf("commit %s: step record: %w", s.name, err))
		}
		if record, err = tree.Compact(opts.Record); err != nil {
			return nil, fmt.Errorf("commit %s: step record: %w", s.name, err)
		}
	}
	build, finish := state.build, func(bool) {}
	// A JSON state is built through the held document, staged: it is
	// committed only once the step is written, and rolled back otherwise.
	var doc *tree.Doc
	switch st := state.(type) {
	case cachedDirState:
		build = func(sink tree.Sink, known func(cas.ID) bool) (manifest.StateKind, tree.Ref, error) {
			kind, root, done, err := dirBuild.build(sink, known)
			if done != nil {
				finish = done
			}
			return kind, root, err
		}
	case jsonState, patchState:
		build = func(sink tree.Sink, _ func(cas.ID) bool) (manifest.StateKind, tree.Ref, error) {
			kind, root, d, err := s.buildState(ctx, st, sink)
			doc = d
			return kind, root, err
		}
	}
	// An error of build (bad JSON, a patch that does not apply, a file
	// that cannot be read) comes before the step's put: nothing of the
	// step can have landed, so it is the caller's error as it stands.
	var buildErr error
	built := func(sink tree.Sink, known func(cas.ID) bool) (manifest.StateKind, tree.Ref, error) {
		kind, root, err := build(sink, known)
		buildErr = err
		return kind, root, err
	}
	st, err := s.ws.repo.Commit(ctx, s.head, s.index, manifest.CommitInput{
		Session: s.name, Build: built, Record: record,
		Status: manifest.Status(opts.Status), Fanout: int(s.ws.fanout.Load()),
		Check: s.headCheck, First: s.first, IdempotencyKey: opts.IdempotencyKey,
	})
	if replay := (*manifest.ReplayedError)(nil); errors.As(err, &replay) {
		finish(false)
		return s.replayed(replay.Step, doc), nil
	}
	// A head from the cache may be stale, its slot holding a step of
	// another chain (retried from the store's head, the commit finds
	// out); a parent read from the store (rewindTo) is not.
	if used := (*manifest.KeyUsedError)(nil); errors.As(err, &used) && (!s.cached || s.retried != nil) {
		finish(false)
		if doc != nil {
			doc.Rollback()
		}
		return nil, s.keyUsed(used.Step)
	}
	var landErr error
	if err == nil {
		landErr = s.checkLanded(ctx, st)
	}
	// The stat cache is saved only for an acknowledged step.
	acked := err == nil && landErr == nil
	finish(acked)
	if !acked && doc != nil {
		doc.Rollback()
	}
	if landErr != nil {
		return nil, landErr
	}
	if moved := (*headMovedError)(nil); errors.As(err, &moved) {
		return nil, s.movedConflict(moved.reason)
	}
	if errors.Is(err, manifest.ErrSlotTaken) {
		return nil, s.lostSlot(ctx)
	}
	if check := (*headCheckError)(nil); errors.As(err, &check) {
		// Nothing was put; the next commit reads the head again.
		n := s.nextNum()
		s.head, s.index = nil, nil
		return nil, fmt.Errorf("commit %s@%d: %w", s.name, n, err)
	}
	if errors.Is(err, cas.ErrNotFound) && buildErr == nil {
		// An object of the parent's layout is gone (compaction reads
		// them). If the slot above the head is taken, the head is no
		// longer this writer's to extend: above all, gc swept the objects
		// of a removed session, whose tombstone fences that slot. Answer
		// as a commit that lost its slot, not with a missing store key.
		if _, rerr := s.ws.repo.ReadStep(ctx, s.name, s.nextNum()); rerr == nil {
			return nil, s.lostSlot(ctx)
		}
	}
	if err != nil && buildErr != nil {
		return nil, fmt.Errorf("commit %s@%d: %w", s.name, s.nextNum(), err)
	}
	if err != nil {
		return nil, s.unsure("commit", s.nextNum(), err)
	}
	// The store has acknowledged this head: it is no longer a guess.
	s.head, s.cached, s.removed = st, false, false
	s.confirmed = s.ws.clock()
	s.saveCached(ctx, st)
	switch {
	case doc != nil:
		doc.Commit()
		s.doc = doc
	case st.Kind != manifest.StateJSON:
		s.doc = nil
	}
	return newStep(s.ws, st), nil
}

// replayed is the answer of a commit that met an earlier try of itself
// (same idempotency key, parent and content) in its slot: that step,
// marked Replayed. The step may lie below the session's head (others
// built on it since), so the head is forgotten: the next commit reads
// the store's, a cost paid after a replay only. doc, if set, was built
// to the step's very state, and serves the next commit if the step is
// still the head.
func (s *Session) replayed(st *manifest.Step, doc *tree.Doc) *Step {
	s.head, s.index, s.retried, s.cached = nil, nil, nil, false
	s.doc = nil
	if doc != nil {
		doc.Commit()
		s.doc = doc
	}
	out := newStep(s.ws, st)
	out.Replayed = true
	return out
}

// keyUsed is the conflict of a commit whose idempotency key is held by
// st, a step with another parent, state, record or status. The head is
// forgotten: the next commit reads the store's.
func (s *Session) keyUsed(st *manifest.Step) *ConflictError {
	s.head, s.index, s.retried = nil, nil, nil
	return &ConflictError{Session: s.name, Number: st.Number, Head: st.Number, keyUsed: true,
		Reason: fmt.Sprintf("idempotency key %q was already used for step %d, which has another parent, state, record or status: give each step its own key, and the same key only to retries of the same commit", st.IdempotencyKey, st.Number)}
}

// checkExpect refuses a commit whose CommitOptions.Expect is not the
// session's head, reading the head again before refusing: this
// process's view may be stale.
func (s *Session) checkExpect(ctx context.Context, opts CommitOptions) error {
	if opts.Expect != nil && s.visibleHead() != *opts.Expect {
		// Our view may be stale: check the store before refusing.
		if err := s.load(ctx, true); err != nil {
			return fmt.Errorf("commit %s: %w", s.name, err)
		}
		if s.visibleHead() != *opts.Expect && s.retried == nil {
			// An earlier try of this commit may have landed above the
			// expected head, and others built on it since.
			if err := s.expectedRetry(ctx, *opts.Expect); err != nil {
				return err
			}
		}
		if s.visibleHead() != *opts.Expect {
			if r := s.retried; r != nil && r.Number == *opts.Expect {
				return s.keyUsed(r)
			}
			// Number is the step this commit would have written, above
			// the head it found: not the one the caller expected to write.
			// A retry is built on its key's step's parent, but that step
			// is the session's head, and the one a caller must expect.
			head, next := s.visibleHead(), s.nextNum()
			if s.retried != nil {
				head, next = s.retried.Number, s.retried.Number+1
			}
			expected, found := fmt.Sprintf("expected head %d", *opts.Expect), fmt.Sprintf("the head is %d", head)
			if *opts.Expect == 0 {
				expected = "expected a session with no steps"
			}
			switch {
			case s.removed:
				found = "the session was removed"
			case head == 0:
				found = "the session has no steps"
			}
			return &ConflictError{Session: s.name, Number: next, Head: head, Reason: expected + ", but " + found}
		}
	}
	return nil
}

// expectedRetry looks, for a commit with an idempotency key that
// expected head n and found the session past it, at step n+1: if that
// step holds the commit's key, it may be an earlier try of this commit
// that others built on since, and the commit is built beside it
// (rewindTo). It reads that step: one GET, on this refusal only.
func (s *Session) expectedRetry(ctx context.Context, n uint64) error {
	if s.retryKey == "" || s.removed || s.head == nil || s.head.Number <= n {
		return nil
	}
	st, err := s.ws.repo.ReadStep(ctx, s.name, n+1)
	if err != nil || st.IdempotencyKey != s.retryKey {
		return nil // the conflict as it stands
	}
	if err := s.rewindTo(ctx, st); err != nil {
		return fmt.Errorf("commit %s: %w", s.name, err)
	}
	return nil
}

// reconfirm checks a head this writer has held for longer than
// manifest.HeadTrust against the store's before it commits on it. gc
// deletes a slot only once it is manifest.SlotFenceAge old, and a writer
// whose head is below such a slot got that head before the slot was
// written: without this check its conditional put would fill the slot
// again, and its step, acknowledged, would lie below the session's base
// where no reader looks. If the store's head is another, the commit is
// the conflict it would have met had the slot still been there (for a
// head from the cache: a retry from the store's head). A head from the
// cache counts from when the cache was saved.
//
// The commit checks again right before its step's conditional put
// (headCheck), since the build may take long and the writer may be
// paused anywhere in it: what counts is how long the head has been held
// when the put is sent.
func (s *Session) reconfirm(ctx context.Context) error {
	if s.index == nil {
		return nil
	}
	moved, err := s.headMoved(ctx)
	if err != nil {
		return fmt.Errorf("commit %s: %w", s.name, err)
	}
	if moved != "" {
		return s.movedConflict(moved)
	}
	return nil
}

// headMoved says how the store's head is no longer the one this writer
// holds ("" if it is), reading it only if the writer has held its head
// for longer than manifest.HeadTrust; if it is the same, the head counts
// as confirmed now.
func (s *Session) headMoved(ctx context.Context) (string, error) {
	now := s.ws.clock()
	if !s.heldLong(now) {
		return "", nil
	}
	st, _, base, err := s.ws.repo.ReadHead(ctx, s.name)
	if err != nil {
		return "", err
	}
	// A commit built beside a step holding its idempotency key holds
	// that step, as far as the store's head goes.
	head := s.head
	if s.retried != nil {
		head = s.retried
	}
	held := "a session with no steps"
	if head != nil {
		held = "step " + strconv.FormatUint(head.Number, 10)
	}
	switch {
	case st == nil && head == nil:
		s.confirmed, s.cached, s.first = now, false, base
		return "", nil
	case st != nil && head != nil && st.ID == head.ID:
		s.confirmed, s.cached = now, false
		return "", nil
	case st == nil:
		return fmt.Sprintf("the session has no steps now; this writer held %s", held), nil
	case isRemoved(st, base):
		return "the session was removed", nil
	}
	return fmt.Sprintf("the session moved on while this writer held %s: its head is step %d", held, st.Manifest.Number), nil
}

// movedConflict is the error of a commit whose head moved (headMoved's
// reason): the conflict it would have met at a taken slot, or, for a
// head from the cache, errStaleHead, a retry from the store's head. The
// head is forgotten either way.
func (s *Session) movedConflict(reason string) error {
	if s.cached {
		s.dropCached()
		return errStaleHead
	}
	n := s.headNum()
	s.head, s.index = nil, nil
	return &ConflictError{Session: s.name, Number: n + 1, Head: n, Reason: reason}
}

// headMovedError is headCheck's error when the store's head is no
// longer the one the commit builds on: why, in headMoved's words.
type headMovedError struct{ reason string }

func (e *headMovedError) Error() string { return e.reason }

// headCheckError is headCheck's error when the head could not be read.
type headCheckError struct{ err error }

func (e *headCheckError) Error() string { return "read the head again: " + e.err.Error() }
func (e *headCheckError) Unwrap() error { return e.err }

// headCheck is the commit's last check (manifest.CommitInput.Check),
// right before its step's put: reconfirm's, for a commit that took (or
// was paused for) longer than manifest.HeadTrust since its head was
// confirmed. It costs nothing otherwise.
func (s *Session) headCheck(ctx context.Context) error {
	moved, err := s.headMoved(ctx)
	switch {
	case err != nil:
		return &headCheckError{err}
	case moved != "":
		return &headMovedError{moved}
	}
	return nil
}

// checkLanded makes sure a step whose put succeeded is where readers
// look, when the writer held its head for longer than
// manifest.HeadTrust by the time the put returned. reconfirm checks the
// head when a commit starts, but the writer may be paused anywhere after
// that, up to its step's put: meanwhile others may take the session past
// the slot, prune it (or remove the session and reuse the name), and gc,
// once the slot is manifest.SlotFenceAge old, delete it, so that the put
// fills the slot again below the session's base. The time is measured
// after the put, so no pause escapes it: a slot gc emptied was written
// after this writer confirmed its head and deleted SlotFenceAge later.
// Such a step is never acknowledged: the commit is the conflict it would
// have met had the slot been there (a head from the cache: a retry from
// the store's), and the step left below the base is garbage for gc. A
// base that cannot be read leaves the step's fate unknown:
// ErrMaybeWritten.
//
// A session's first step (no parent) is checked whatever the time: a
// fork to the same name, from a pruned session, may have set the name's
// base to its source's since this writer found the name empty, and a
// step put below it would be hidden by the fork's. A fork still in
// flight is waited for first (awaitFork).
func (s *Session) checkLanded(ctx context.Context, st *manifest.Step) error {
	if !s.heldLong(s.ws.clock()) && st.Manifest.Parent != nil {
		return nil
	}
	n := st.Manifest.Number
	if st.Manifest.Parent == nil {
		if err := s.awaitFork(ctx, n); err != nil {
			s.head, s.index = nil, nil
			return err
		}
	}
	base, hidden, err := s.landedHidden(ctx, st)
	if err != nil {
		s.head, s.index = nil, nil
		return fmt.Errorf("commit %s@%d: %w: the session cannot be read to check the step is in its history: %w", s.name, n, ErrMaybeWritten, err)
	}
	if !hidden {
		return nil
	}
	if s.cached {
		s.dropCached()
		return errStaleHead
	}
	s.head, s.index = nil, nil
	reason := fmt.Sprintf("the session's base is step %d now, above this step: others moved the session past it, or a fork took the name, while this writer held its head", base)
	if base <= n {
		reason = "a fork took the name while this writer created the session: its step is above this one"
	}
	return &ConflictError{Session: s.name, Number: n, Head: n - 1, Reason: reason}
}

// awaitFork waits, after the put of a session's first step (number n),
// until no fork to the session's name that may land above it is in
// flight (manifest.Repo.AwaitForks): such a fork found the name empty
// before this step's put, and its step would hide this one and every
// step built on it. A fork that does not end in time leaves the step's
// fate to it: ErrMaybeWritten, never an acknowledgement.
func (s *Session) awaitFork(ctx context.Context, n uint64) error {
	err := s.ws.repo.AwaitForks(ctx, s.name, n)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, manifest.ErrForkInFlight):
		return fmt.Errorf("commit %s@%d: %w: a fork to session %s began before this first step and has not ended; if it lands, its step is the session's head and this one is not in its history (cairn log %s says which)",
			s.name, n, ErrMaybeWritten, s.name, s.name)
	}
	return fmt.Errorf("commit %s@%d: %w: the session cannot be read to check the step is in its history: %w", s.name, n, ErrMaybeWritten, err)
}

// landedHidden reports whether st, just put, lies outside its session's
// history: below the base, or, for a first step (no parent), beside a
// fork to the same name that landed above it (at its source's number,
// with a parent in its source) before this step's put. A step whose
// slot above holds its child was in the history (others built on it,
// and may have pruned past it since).
func (s *Session) landedHidden(ctx context.Context, st *manifest.Step) (base uint64, hidden bool, err error) {
	n := st.Manifest.Number
	repo := s.ws.repo
	if st.Manifest.Parent != nil {
		if base, err = repo.ReadBase(ctx, s.name); err != nil || base <= n {
			return base, false, err
		}
	} else {
		var head uint64
		if head, base, err = repo.FindHeadBase(ctx, s.name); err != nil || (head <= n && base <= n) {
			return base, false, err
		}
	}
	// A child in the slot above: others built on this step (and may have
	// pruned past it since): it was in the history, acknowledged.
	next, err := repo.ReadStep(ctx, s.name, n+1)
	if errors.Is(err, cas.ErrNotFound) {
		return base, true, nil
	}
	if err != nil {
		return base, false, err
	}
	p := next.Manifest.Parent
	return base, p == nil || p.Session != s.name || p.Number != n || p.ID != st.ID, nil
}

// heldLong reports whether, by now, this writer has held its head for
// longer than manifest.HeadTrust since the store confirmed it. A head
// confirmed in the future (a head cache saved while this machine's
// clock ran ahead, since put right; the file's time has no monotonic
// reading) counts as held long: how long it was held is unknown.
func (s *Session) heldLong(now time.Time) bool { return longAgo(now, s.confirmed) }

// longAgo reports whether since is more than manifest.HeadTrust before
// now, by the monotonic clock and by the wall clock (which counts a
// suspended machine's sleep) alike. A since after now counts as long
// ago: how long is unknown.
func longAgo(now, since time.Time) bool {
	held := max(now.Sub(since), now.Round(0).Sub(since.Round(0)))
	return held > manifest.HeadTrust || held < 0
}

// lostSlot builds the error of a commit whose slot, the one above its
// head, is taken: the conflict, with the removal's reason if the holder
// is gc's tombstone; or, for a head from the cache, errStaleHead if the
// commit should be retried from the store's head (staleCache).
func (s *Session) lostSlot(ctx context.Context) error {
	if s.cached {
		return s.staleCache(ctx)
	}
	e := s.conflict(ctx, s.nextNum())
	if e.fence || s.removedSince(ctx) {
		// Only a removal fences the slot above a session's head (an
		// expired fork pin fences the fork's first slot, not a commit's).
		// A slot another writer took before the session was removed
		// above it is the removal's conflict too: a retry could only
		// meet the removal, so that is what the loser is told.
		e.Reason, e.Holder = "the session was removed", ""
	}
	return e
}

// removedSince reports whether the store's head of the session, read
// again on this error path only, is a removed session's.
func (s *Session) removedSince(ctx context.Context) bool {
	st, _, base, err := s.ws.repo.ReadHead(ctx, s.name)
	return err == nil && st != nil && isRemoved(st, base)
}

// conflict builds the error for a lost slot and forgets the stale head.
func (s *Session) conflict(ctx context.Context, n uint64) *ConflictError {
	head := s.headNum()
	s.head, s.index = nil, nil
	e := &ConflictError{Session: s.name, Number: n, Head: head, Reason: "another writer already wrote this step"}
	if w, err := s.ws.repo.ReadStep(ctx, s.name, n); err == nil {
		e.Holder, e.fence = w.Writer, manifest.IsTombstone(w.Manifest)
	}
	return e
}

// visibleHead is the head readers see: 0 for a removed session, whose
// last step (or the tombstone above it) a commit still follows.
func (s *Session) visibleHead() uint64 {
	if s.removed {
		return 0
	}
	return s.headNum()
}

func (s *Session) headNum() uint64 {
	if s.head == nil {
		return 0
	}
	return s.head.Number
}

// nextNum is the number of the step a commit writes next: the one after
// the head, or a first step's (Session.first).
func (s *Session) nextNum() uint64 {
	if s.head == nil {
		return max(1, s.first)
	}
	return s.head.Number + 1
}

// Head returns the session's newest step, read from the store. A session
// with no steps is ErrNotFound.
func (s *Session) Head(ctx context.Context) (_ *Step, err error) {
	if err := s.enter(ctx, "head of "+s.Name()); err != nil {
		return nil, err
	}
	defer s.ws.exit()
	return s.headStep(ctx)
}

// headStep is Head for a call already in flight.
func (s *Session) headStep(ctx context.Context) (_ *Step, err error) {
	defer s.ws.classifyTo(&err)
	s.mu.Lock()
	defer s.mu.Unlock()
	// As load(ctx, true), but learning the base in the same requests.
	st, _, base, err := s.ws.repo.ReadHead(ctx, s.name)
	if err != nil {
		// What the session holds is left as it was: the head it last
		// loaded or committed, whose slot above still fences a commit.
		return nil, fmt.Errorf("head of %s: %w", s.name, err)
	}
	s.head, s.index = nil, s.ws.repo.NewIndex()
	s.cached, s.stamp = false, ""
	s.confirmed = s.ws.clock()
	if st == nil {
		return nil, noStepsErr(s.name, 0)
	}
	// Loaded even when the session was removed: a commit to a removed
	// name claims the step above its last one (never reusing a key), and
	// loses if another writer took it since, as for any resumed session.
	s.head, s.removed = st, isRemoved(st, base)
	if s.removed {
		return nil, removedErr(s.name, 0)
	}
	return newStep(s.ws, s.head), nil
}

// Step returns step n of the session; steps are numbered from 1 (n = 0
// is ErrInvalid). Below a fork's first step, step n of the fork is the
// step numbered n of the history it was forked from (b@2 of a fork b of
// a@3 is a@2, or, if a is a fork too, the step further down): the step
// as it was written, with its own Session and Number, whether or not
// that session has pruned it or been removed since. Finding it costs one
// LIST and one GET per fork it passes (at most manifest.MaxForkLevels),
// never a walk through the history. Its Log and a Fork of it follow the
// fork's history.
func (s *Session) Step(ctx context.Context, n uint64) (_ *Step, err error) {
	if err := s.enter(ctx, fmt.Sprintf("step %s@%d", s.Name(), n)); err != nil {
		return nil, err
	}
	defer s.ws.exit()
	return s.step(ctx, n)
}

// step is Step for a call already in flight.
func (s *Session) step(ctx context.Context, n uint64) (_ *Step, err error) {
	defer s.ws.classifyTo(&err)
	if n == 0 {
		return nil, invalid(fmt.Errorf("step %s@0: steps are numbered from 1", s.name))
	}
	base, err := s.ws.repo.ReadBase(ctx, s.name)
	if err != nil {
		return nil, fmt.Errorf("step %s@%d: %w", s.name, n, err)
	}
	if n < base {
		// Pruned, removed, or a damaged base marker: gc's rule tells.
		return nil, s.ws.underBase(ctx, s.name, n, base)
	}
	st, err := s.ws.repo.ReadStep(ctx, s.name, n)
	if errors.Is(err, cas.ErrNotFound) {
		st, first, err := s.ws.missingStep(ctx, s.name, n)
		if first != nil {
			// Below a fork's first step the history is shared: step n
			// of the fork is the step numbered n that its first step's
			// parent goes down to (in the session forked from, or
			// further down a chain of forks of forks), read as it was
			// written, in this session's history. Its own session may
			// have pruned it or been removed since: this history holds
			// it, and gc keeps it.
			return s.forkedStep(ctx, first, n)
		}
		if err != nil {
			return nil, err
		}
		return newStep(s.ws, st), nil
	}
	if err != nil {
		return nil, err
	}
	return newStep(s.ws, st), nil
}

// missingStep says why step n of session has no object in the store
// (a read of it said cas.ErrNotFound), as Session.Step and
// Workspace.ReadStep say it: the session has no steps, the step is
// above its head, below its base (pruned or removed: underBase), or the
// store lost it. It is the path of a read that failed only: it costs a
// listing of the session's steps, and, as the answer needs, a read of
// its base's neighbour, a second read of the step (which may have
// landed since the first), and the session's first step. It returns
// the step if it landed since; or, if the session is a fork and n is
// below its first step, that first step, whose history holds step n
// (the caller reads it there, or not); else the error, a
// *NotFoundError, or the listing's error, wrapped, if the session's
// steps cannot be listed: then whether step n was ever written is not
// known, and it is not said lost.
func (w *Workspace) missingStep(ctx context.Context, session string, n uint64) (st, forkFirst *manifest.Step, err error) {
	// Above the head the step was never written: say so in the user's
	// words. At or below it, an object is missing: name it.
	head, base, err := w.repo.FindHeadBase(ctx, session)
	if err != nil {
		// Where the session ends is not known: its steps cannot be
		// listed (a file stands where their directory belongs, the
		// store did not answer). The listing's error says what is
		// wrong, in the words log and verify use.
		return nil, nil, fmt.Errorf("step %s@%d: %w", session, n, err)
	}
	switch {
	case head == 0:
		return nil, nil, noStepsErr(session, n)
	case n > head:
		if head < base {
			now, err := w.notRemoved(ctx, session, n)
			if err != nil {
				return nil, nil, err
			}
			head = now // committed and pruned since the base was read
		}
		return nil, nil, &NotFoundError{Session: session, Step: n, Why: NotFoundPastHead, Head: head}
	case n < base:
		// Pruned or removed since it was asked for, and gc swept it.
		return nil, nil, w.underBase(ctx, session, n, base)
	}
	// The head is at or past n: step n may have landed since it was
	// read (a commit beside this read). A step slot, once written,
	// stays, so a second read tells.
	st, err = w.repo.ReadStep(ctx, session, n)
	if err == nil {
		return st, nil, nil
	}
	if !errors.Is(err, cas.ErrNotFound) {
		return nil, nil, err
	}
	if first, ferr := w.firstStep(ctx, session); ferr == nil && first != nil && first.Origin != nil && first.Parent != nil && n < first.Number {
		return nil, first, nil
	}
	// At or below the head with no object: the store lost it (or a
	// prune and gc swept it since the base was read). That is damage;
	// the read's own words ("read session d, step 20: not found") would
	// say the step and its absence twice.
	return nil, nil, &NotFoundError{Session: session, Step: n, Why: NotFoundLost}
}

// forkedStep returns step n of the session, below first, its first
// step, whose parent is in the session it was forked from: the step of
// that history (manifest.Repo.HistoryStep: one LIST and one GET per fork
// level), as read in this session's history.
func (s *Session) forkedStep(ctx context.Context, first *manifest.Step, n uint64) (*Step, error) {
	st, start, err := s.ws.repo.HistoryStep(ctx, *first.Parent, n)
	switch {
	case errors.Is(err, cas.ErrNotFound):
		return nil, &NotFoundError{Session: s.name, Step: n, Why: NotFoundLost, Below: first.Number}
	case err != nil:
		return nil, fmt.Errorf("step %s@%d: %w", s.name, n, err)
	case st == nil:
		return nil, &NotFoundError{Session: s.name, Step: n, Why: NotFoundBeforeStart, Start: start}
	}
	return newStep(s.ws, st).inHistory(s.name), nil
}

// notRemoved returns the head of session, or the error for its step n
// if the session was removed or its base marker is damaged
// (removedNow).
func (w *Workspace) notRemoved(ctx context.Context, session string, n uint64) (head uint64, err error) {
	removed, head, err := w.removedNow(ctx, session)
	switch {
	case err != nil:
		return 0, fmt.Errorf("step %s@%d: %w", session, n, err)
	case removed:
		return 0, removedErr(session, n)
	}
	return head, nil
}

// Log calls fn for each step from the session's head back to its first
// step, following parents across forks, newest first.
func (s *Session) Log(ctx context.Context, fn func(*Step) error) error {
	if err := s.enter(ctx, "log "+s.Name()); err != nil {
		return err
	}
	if fn == nil {
		return nilArg("log "+s.name, "function", "fn")
	}
	defer s.ws.exit()
	head, err := s.headStep(ctx)
	if err != nil {
		return err
	}
	return head.log(ctx, fn)
}

// Fork creates session to whose head is a copy of step from: one small
// manifest pointing at from's parent and sharing all of from's data. The
// next commit to the new session is step from.Number+1. It fails with
// ErrConflict if session to already has steps, and with ErrNotFound if
// from has been pruned since it was read. The new session's history
// ends where the history from was read in ends (the base of from's
// session, or, for a step read in a fork's history below its fork point,
// the fork's: a fork of b@2, where b was forked from a@3, is a fork of
// a@2 whose history ends where b's does, whether or not a has pruned or
// removed a@2 since), and a fork paused for any time beside gc either
// lands whole or fails with ErrConflict (see docs/reliability.md).
func (w *Workspace) Fork(ctx context.Context, from *Step, to string) (_ *Step, err error) {
	if err := w.enterCtx(ctx, "fork to "+to); err != nil {
		return nil, err
	}
	defer w.exit()
	defer w.classifyWrite(&err, "the fork's first step")
	if from == nil || from.m == nil {
		return nil, invalid(fmt.Errorf("fork to %s: no step to fork from", to))
	}
	t, err := w.session(to)
	if err != nil {
		return nil, err
	}
	if err := w.checkOwnStep(ctx, from); err != nil {
		return nil, fmt.Errorf("fork %s to %s: %w", from, to, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.load(ctx, true); err != nil {
		return nil, fmt.Errorf("fork to %s: %w", to, err)
	}
	if t.head != nil {
		reason := fmt.Sprintf("session %s already exists (its head is step %d): fork to a new name", to, t.headNum())
		if t.removed {
			reason = "the session was removed, and a fork cannot take a removed session's name (a commit can; or fork to a new name)"
		}
		// A removed session's head is 0 to readers and to a commit's
		// --expect, not its tombstone's slot.
		return nil, &ConflictError{Session: to, Number: from.m.Number, Head: t.visibleHead(), Reason: reason}
	}
	// Right before the fork's put, as for a commit (Session.headCheck):
	// a forker that has held "no steps yet" for longer than
	// manifest.HeadTrust reads the target's head again, so that it never
	// fills a slot that a session since written there lost to gc; and a
	// fork whose put came back late checks that it landed in the
	// target's history (checkForkLanded).
	start := w.clock()
	st, err := w.repo.Fork(ctx, from.m, from.history(), to, t.headCheck)
	if err == nil {
		err = w.checkForkLanded(ctx, t, start, st)
	}
	var hidden *manifest.ForkHiddenError
	var taken *manifest.NameTakenError
	switch {
	case errors.As(err, &hidden):
		return nil, &ConflictError{Session: to, Number: from.m.Number, Head: hidden.Head,
			Reason: fmt.Sprintf("another fork to %s landed above this one, at step %d: that step is the session's head", to, hidden.Head)}
	case errors.As(err, &taken):
		return nil, &ConflictError{Session: to, Number: from.m.Number,
			Reason: fmt.Sprintf("session %s was created by another writer while this fork ran: fork to a new name", to)}
	case errors.Is(err, manifest.ErrForkFirst):
		return nil, &ConflictError{Session: to, Number: from.m.Number,
			Reason: fmt.Sprintf("another fork to %s began first and has not ended: fork to a new name, or try again", to)}
	case errors.Is(err, manifest.ErrUnchecked):
		return nil, fmt.Errorf("%w: %w", ErrMaybeWritten, err)
	}
	if moved := (*headMovedError)(nil); errors.Is(err, manifest.ErrSlotTaken) || errors.As(err, &moved) {
		return nil, t.conflict(ctx, from.m.Number)
	}
	if errors.Is(err, manifest.ErrPruned) {
		return nil, fmt.Errorf("fork %s to %s: %w", from, to, w.leftHistory(ctx, from, err))
	}
	if err != nil {
		return nil, t.unsure("fork "+from.String()+" to", from.m.Number, err)
	}
	t.head, t.confirmed = st, w.clock()
	return newStep(w, st), nil
}

// leftHistory is the error for step from, read before, that the history
// it was read in no longer holds (manifest.Repo.Fork's ErrPruned, cause):
// said as Session.Step says it of a step below the base, by gc's rule
// (removedNow, then belowBase), so that a session removed since the step
// was read (a cairn rm beside the fork) is called removed, not pruned.
func (w *Workspace) leftHistory(ctx context.Context, from *Step, cause error) error {
	via := from.history()
	removed, _, err := w.removedNow(ctx, via)
	switch {
	case err != nil:
		return fmt.Errorf("step %s@%d: %w", via, from.m.Number, err)
	case removed:
		// As Session.Step says it: a fork's history may hold the step.
		return &NotFoundError{Session: via, Step: from.m.Number, Why: NotFoundRemoved, InForks: true}
	}
	base, err := w.repo.ReadBase(ctx, via)
	if err != nil {
		return fmt.Errorf("step %s@%d: %w", via, from.m.Number, err)
	}
	if from.m.Number >= base {
		// Not below the base now (the one way a base goes down: a fork
		// that lost took back the base it had set on its new session;
		// or a base marker lost since): what Fork found is all there is
		// to say, in the words of a pruned step.
		var pruned *manifest.PrunedError
		if errors.As(cause, &pruned) {
			return &NotFoundError{Session: via, Step: from.m.Number, Why: NotFoundPruned, Start: pruned.Start}
		}
		return cause
	}
	return w.belowBase(ctx, via, from.m.Number, base)
}

// checkOwnStep refuses a step read through another workspace whose
// store does not hold it: a fork of it would name objects this store
// lacks, and read as corrupt. A step read through w, the common case,
// costs nothing; one read through another workspace (of the same store,
// opened twice) costs a read of its manifest here.
func (w *Workspace) checkOwnStep(ctx context.Context, st *Step) error {
	if st.ws == w {
		return nil
	}
	// The step as read decides, not its exported fields, which a caller
	// may have set: what a fork or diff uses is st.m.
	m, err := w.repo.ReadStep(ctx, st.m.Session, st.m.Number)
	if errors.Is(err, cas.ErrNotFound) {
		return &NotFoundError{Session: st.m.Session, Step: st.m.Number, Why: NotFoundOtherStore}
	}
	if err == nil && m.ID != st.m.ID {
		return invalid(fmt.Errorf("step %s was read through another workspace, from another store: this store's %s is a different step", st, st))
	}
	return err
}

// checkForkLanded makes sure a fork whose put succeeded is where readers
// look, when the fork took longer than manifest.HeadTrust. Its slot was
// empty when the fork began (the target had no steps); if another step
// took it meanwhile (above all gc's fence, once the fork's pin expired)
// and gc deleted that step (below the base once the name was committed
// to again, and SlotFenceAge old), the put filled the slot again below
// the target's base: it is then the conflict it would have met had the
// slot still been there, never acknowledged. The time is measured after
// the put, so no pause escapes it.
func (w *Workspace) checkForkLanded(ctx context.Context, t *Session, start time.Time, st *manifest.Step) error {
	if !longAgo(w.clock(), start) {
		return nil
	}
	base, hidden, err := t.landedHidden(ctx, st)
	if err != nil {
		return &manifest.StepPutError{Err: fmt.Errorf("the fork was paused and its session cannot be read to check its step is in its history: %w", err)}
	}
	if !hidden {
		return nil
	}
	return fmt.Errorf("fork lands outside %s's history (its base is %d): %w", st.Manifest.Session, base, manifest.ErrSlotTaken)
}
