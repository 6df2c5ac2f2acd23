package cairn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

// Session is one chain of steps. Its methods are safe for concurrent
// use; commits through one *Session are serialised.
type Session struct {
	ws   *Workspace
	name string

	mu sync.Mutex
	// head is the newest step this process knows of, with index covering
	// its layout; nil until first needed. A commit that loses a race
	// clears it so the next one re-reads the store.
	head  *manifest.Step
	index *manifest.Index
}

// Name returns the session's name.
func (s *Session) Name() string { return s.name }

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
}

// ExpectHead returns a pointer to n, for CommitOptions.Expect.
func ExpectHead(n uint64) *uint64 { return &n }

// ConflictError is returned (wrapping ErrConflict) when a commit loses.
type ConflictError struct {
	Session string
	Step    uint64 // the step the commit wanted
	Head    uint64 // the session's head as the loser saw it
	Holder  string // the writer holding Step, if known
	Reason  string
}

func (e *ConflictError) Error() string {
	msg := fmt.Sprintf("conflict on %s@%d: %s", e.Session, e.Step, e.Reason)
	if e.Holder != "" {
		msg += " (held by " + e.Holder + ")"
	}
	return msg
}

// Unwrap makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// writerID names this process in the manifests it writes.
var writerID = func() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("%s/%d", h, os.Getpid())
}()

// load makes sure s.head reflects the store, reading it if unknown.
func (s *Session) load(ctx context.Context, refresh bool) error {
	// A loaded session has an index even when it has no steps yet, so a
	// writer that saw an empty session commits step 1 (and loses if
	// another writer got there first) instead of re-reading the head.
	if s.index != nil && !refresh {
		return nil
	}
	repo := s.ws.repo
	n, err := repo.FindHead(ctx, s.name)
	if err != nil {
		return err
	}
	s.head, s.index = nil, repo.NewIndex()
	if n == 0 {
		return nil
	}
	st, err := repo.ReadStep(ctx, s.name, n)
	if err != nil {
		return err
	}
	s.head = st
	return nil
}

// Commit stores state as the next step of the session and returns it.
// It is acknowledged only when the step object's conditional put
// returned; if another writer got there first it returns an error
// wrapping ErrConflict and nothing it wrote is visible.
func (s *Session) Commit(ctx context.Context, state State, opts CommitOptions) (*Step, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(ctx, false); err != nil {
		return nil, fmt.Errorf("commit %s: %w", s.name, err)
	}
	if opts.Expect != nil && s.headNum() != *opts.Expect {
		// Our view may be stale: check the store before refusing.
		if err := s.load(ctx, true); err != nil {
			return nil, fmt.Errorf("commit %s: %w", s.name, err)
		}
		if s.headNum() != *opts.Expect {
			return nil, &ConflictError{Session: s.name, Step: *opts.Expect + 1, Head: s.headNum(),
				Reason: fmt.Sprintf("expected head %d, but the head is %d", *opts.Expect, s.headNum())}
		}
	}
	if err := checkReuse(state, s.head); err != nil {
		return nil, fmt.Errorf("commit %s: %w", s.name, err)
	}
	var record []byte
	if len(opts.Record) > 0 {
		var err error
		if record, err = tree.Compact(opts.Record); err != nil {
			return nil, fmt.Errorf("commit %s: step record: %w", s.name, err)
		}
		if len(record) > manifest.MaxRecordSize {
			return nil, fmt.Errorf("commit %s: step record of %d bytes exceeds %d", s.name, len(record), manifest.MaxRecordSize)
		}
	}
	if s.head != nil {
		// Dedup against every blob the parent's state may use.
		if err := s.index.Load(ctx, s.head.Layout); err != nil {
			return nil, fmt.Errorf("commit %s: load parent index: %w", s.name, err)
		}
	}
	var b pack.Builder
	kind, root, err := state.build(sinkFunc(func(id cas.ID, raw []byte) error {
		if !s.index.Has(id) {
			b.Add(id, raw)
		}
		return nil
	}))
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", s.name, err)
	}
	m := &manifest.Manifest{
		Session: s.name,
		Step:    s.headNum() + 1,
		Time:    time.Now().UTC(),
		Status:  opts.Status,
		Writer:  writerID,
		Record:  record,
		Kind:    kind,
		Root:    root,
	}
	var compaction *manifest.Compaction
	if s.head != nil {
		p := s.head.Pointer()
		m.Parent = &p
		m.Layout = cloneLayout(s.head.Layout)
		if s.ws.fanout > 1 {
			c, err := s.ws.repo.Compact(ctx, s.name, m.Step, m.Layout, root, s.index, &b, s.ws.fanout)
			if err != nil {
				return nil, fmt.Errorf("commit %s: %w", s.name, err)
			}
			if c != nil {
				// The pack goes first, the manifest naming it last (I2).
				// A taken pack key (a crashed or racing commit of this
				// step) leaves the merge to the next step.
				err := s.ws.repo.WritePack(ctx, c)
				switch {
				case err == nil:
					compaction, m.Layout = c, c.Layout
				case !errors.Is(err, manifest.ErrPackExists):
					return nil, fmt.Errorf("commit %s: %w", s.name, err)
				}
			}
		}
	} else if err := s.ws.repo.MarkSession(ctx, s.name); err != nil {
		return nil, fmt.Errorf("commit %s: %w", s.name, err)
	}
	if b.Len() > 0 {
		m.Layout.Steps = appendRange(m.Layout.Steps, s.name, m.Step)
	}
	st, entries, err := s.ws.repo.WriteStep(ctx, m, &b)
	if err != nil {
		if errors.Is(err, manifest.ErrSlotTaken) {
			return nil, s.conflict(ctx, m.Step)
		}
		return nil, fmt.Errorf("commit %s@%d: %w", s.name, m.Step, err)
	}
	if compaction != nil {
		s.index.Compacted(compaction)
	}
	s.index.Add(st.Key, entries)
	s.head = st
	if m.Step%manifest.HintEvery == 0 {
		// Only a hint: a failure costs the next resumer one longer LIST.
		_ = s.ws.repo.WriteHint(ctx, s.name, m.Step)
	}
	return newStep(s.ws, st), nil
}

// conflict builds the error for a lost slot and forgets the stale head.
func (s *Session) conflict(ctx context.Context, step uint64) error {
	head := s.headNum()
	s.head, s.index = nil, nil
	e := &ConflictError{Session: s.name, Step: step, Head: head, Reason: "another writer already wrote this step"}
	if w, err := s.ws.repo.ReadStep(ctx, s.name, step); err == nil {
		e.Holder = w.Writer
	}
	return e
}

func (s *Session) headNum() uint64 {
	if s.head == nil {
		return 0
	}
	return s.head.Manifest.Step
}

func cloneLayout(l manifest.Layout) manifest.Layout {
	return manifest.Layout{
		Packs: append([]manifest.PackRef(nil), l.Packs...),
		Steps: append([]manifest.Range(nil), l.Steps...),
	}
}

func appendRange(rs []manifest.Range, session string, n uint64) []manifest.Range {
	if k := len(rs); k > 0 && rs[k-1].Session == session && rs[k-1].Last+1 == n {
		rs[k-1].Last = n
		return rs
	}
	return append(rs, manifest.Range{Session: session, First: n, Last: n})
}

// Head returns the session's newest step, read from the store. A session
// with no steps is ErrNotFound.
func (s *Session) Head(ctx context.Context) (*Step, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// As load(ctx, true), but learning the base in the same requests.
	head, base, err := s.ws.repo.FindHeadBase(ctx, s.name)
	if err != nil {
		return nil, fmt.Errorf("head of %s: %w", s.name, err)
	}
	s.head, s.index = nil, s.ws.repo.NewIndex()
	if head == 0 {
		return nil, fmt.Errorf("head of %s: %w: %w", s.name, ErrNotFound, manifest.ErrNoSession)
	}
	st, err := s.ws.repo.ReadStep(ctx, s.name, head)
	if err != nil {
		s.index = nil // not loaded: the next commit reads the store again
		return nil, fmt.Errorf("head of %s: %w", s.name, err)
	}
	// Loaded even when the session was removed: a commit to a removed
	// name claims the step above its last one (never reusing a key), and
	// loses if another writer took it since, as for any resumed session.
	s.head = st
	if head < base {
		return nil, fmt.Errorf("head of %s: %w: the session was removed", s.name, ErrNotFound)
	}
	return newStep(s.ws, s.head), nil
}

// Step returns step n of the session.
func (s *Session) Step(ctx context.Context, n uint64) (*Step, error) {
	base, err := s.ws.base(ctx, s.name)
	if err != nil {
		return nil, fmt.Errorf("step %s@%d: %w", s.name, n, err)
	}
	if n < base {
		return nil, fmt.Errorf("step %s@%d: %w: pruned (the session's history starts at step %d)", s.name, n, ErrNotFound, base)
	}
	st, err := s.ws.repo.ReadStep(ctx, s.name, n)
	if errors.Is(err, cas.ErrNotFound) {
		// Above the head the step was never written: say so in the
		// user's words. At or below it, an object is missing: name it.
		if head, herr := s.ws.repo.FindHead(ctx, s.name); herr == nil && n > head {
			if head == 0 {
				return nil, fmt.Errorf("step %s@%d: %w: %w", s.name, n, ErrNotFound, manifest.ErrNoSession)
			}
			return nil, fmt.Errorf("step %s@%d: %w: the session's head is step %d", s.name, n, ErrNotFound, head)
		}
		return nil, fmt.Errorf("step %s@%d: %w: %w", s.name, n, ErrNotFound, err)
	}
	if err != nil {
		return nil, err
	}
	return newStep(s.ws, st), nil
}

// Fork creates session to whose head is a copy of step from: one small
// manifest pointing at from's parent and sharing all of from's data. The
// next commit to the new session is step from.Number+1. It fails with
// ErrConflict if session to already has steps.
func (w *Workspace) Fork(ctx context.Context, from *Step, to string) (*Step, error) {
	t, err := w.Session(to)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.load(ctx, true); err != nil {
		return nil, fmt.Errorf("fork to %s: %w", to, err)
	}
	if t.head != nil {
		return nil, &ConflictError{Session: to, Step: from.Number, Head: t.headNum(), Reason: "session already exists"}
	}
	src := from.m.Manifest
	origin := from.m.Pointer()
	m := &manifest.Manifest{
		Session: to, Step: src.Step, Parent: src.Parent, Origin: &origin,
		Time: time.Now().UTC(), Status: src.Status, Writer: writerID, Record: src.Record,
		Kind: src.Kind, Root: src.Root, Layout: cloneLayout(src.Layout), Truncated: src.Truncated,
	}
	if err := w.repo.MarkSession(ctx, to); err != nil {
		return nil, fmt.Errorf("fork to %s: %w", to, err)
	}
	st, _, err := w.repo.WriteStep(ctx, m, nil)
	if err != nil {
		if errors.Is(err, manifest.ErrSlotTaken) {
			return nil, t.conflict(ctx, m.Step)
		}
		return nil, fmt.Errorf("fork to %s: %w", to, err)
	}
	t.head = st
	return newStep(w, st), nil
}

// Log calls fn for each step from the session's head back to its first
// step, following parents across forks, newest first.
func (s *Session) Log(ctx context.Context, fn func(*Step) error) error {
	head, err := s.Head(ctx)
	if err != nil {
		return err
	}
	return head.Log(ctx, fn)
}
