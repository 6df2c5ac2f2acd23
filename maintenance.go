package cairn

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/manifest"
)

// Retention. Manifests are immutable and hash-chained: a child pins its
// parent's hash, and forks pin the steps they share. So pruning rewrites
// no manifest; it raises the session's base (see manifest.Repo.ReadBase), the
// lowest step of its history, the way git's shallow file marks where a
// shallow clone's history ends. Readers stop there (Step.Log reports the
// last step as Truncated), and GC no longer counts the steps below it as
// live. Removing a session sets its base above its head. Neither deletes
// anything at once: GC does, in two phases, and only objects that no
// live step of any session still needs.

// PruneResult says what Prune or Remove did.
type PruneResult struct {
	Session string
	Head    uint64 // the session's head when it was pruned
	OldBase uint64 // the lowest live step before
	NewBase uint64 // the lowest live step now (Head+2 after Remove: its tombstone holds Head+1)
	// Steps is how many steps left the session's history.
	Steps uint64
}

// liveHead returns the head and base of a session that has live steps.
func (w *Workspace) liveHead(ctx context.Context, session string) (head, base uint64, err error) {
	if err := ValidSession(session); err != nil {
		return 0, 0, err
	}
	// The head as ReadHead settles it: a listed step that is still
	// landing, or that the store drops, must not place the base or the
	// tombstone above a slot a writer can still take. A head that cannot
	// be read (damaged) is still where the session ends: it can be
	// pruned below or removed all the same. A damaged base marker is
	// not: where the session's history starts is unknown, and removing
	// or pruning it would bury the damage under a new marker.
	_, head, base, err = w.repo.ReadHead(ctx, session)
	var bad *manifest.BaseError
	if err != nil && (head == 0 || !errors.Is(err, cas.ErrCorrupt) || errors.As(err, &bad)) {
		return 0, 0, err
	}
	switch {
	case head == 0:
		return 0, 0, noStepsErr(session, 0)
	case head < base:
		return 0, 0, removedErr(session, 0)
	}
	return head, base, nil
}

// Prune keeps the newest keepLast steps of session's history and drops
// the older ones from it. Forks keep their own history, including what
// they share with session's pruned past. keepLast must be at least 1 (use
// Remove to drop everything). Prune must not race a writer of the same
// session; other sessions and GC may run beside it.
func (w *Workspace) Prune(ctx context.Context, session string, keepLast uint64) (_ *PruneResult, err error) {
	if err := w.enterCtx(ctx, "prune "+session); err != nil {
		return nil, err
	}
	defer w.exit()
	defer w.classifyTo(&err)
	if keepLast == 0 {
		return nil, invalid(fmt.Errorf("prune %s: keep at least one step (to drop them all, remove the session)", session))
	}
	read := w.clock()
	head, base, err := w.liveHead(ctx, session)
	if err != nil {
		return nil, ofSession("prune "+session, session, err)
	}
	res := &PruneResult{Session: session, Head: head, OldBase: base, NewBase: base}
	if head < keepLast || head-keepLast+1 <= base {
		return res, nil // already that short
	}
	// The base marker is a plain put: a prune paused for longer than
	// manifest.HeadTrust since it read the base (as for a commit,
	// Session.headCheck) reads it again, or it could lower a base another
	// prune raised meanwhile onto steps gc has deleted since, and the
	// session's history would no longer read.
	if longAgo(w.clock(), read) {
		if _, now, err := w.liveHead(ctx, session); err != nil {
			return nil, ofSession("prune "+session, session, err)
		} else if now >= head-keepLast+1 {
			res.OldBase, res.NewBase = now, now
			return res, nil // another prune went as far
		}
	}
	res.NewBase = head - keepLast + 1
	res.Steps = res.NewBase - base
	if err := w.repo.WriteBase(ctx, session, res.NewBase); err != nil {
		return nil, fmt.Errorf("prune %s: %w", session, err)
	}
	return res, nil
}

// Remove drops every step of session from its history: the session is
// gone for readers at once, and GC later deletes whatever no other
// session (a fork) still needs. Removing fences the session: a tombstone
// takes the slot above its head, so a writer that still holds the old
// head (a live Session in another process, a CLI's head cache) loses its
// next commit with ErrConflict instead of extending a removed session
// unnoticed, and a commit expecting the old head fails. A commit to the
// same name afterwards starts after the tombstone, with no history
// before it, until GC has swept the old steps; after that the name
// starts afresh. If a writer committed the step above the head first,
// Remove removes nothing and says so.
func (w *Workspace) Remove(ctx context.Context, session string) (_ *PruneResult, err error) {
	if err := w.enterCtx(ctx, "remove "+session); err != nil {
		return nil, err
	}
	defer w.exit()
	defer w.classifyTo(&err)
	read := w.clock()
	head, base, err := w.liveHead(ctx, session)
	if err != nil {
		return nil, ofSession("remove "+session, session, err)
	}
	// The tombstone fills the slot above the head read: as for a commit
	// (Session.headCheck), a head read longer than manifest.HeadTrust
	// ago is read again first, or a slot gc emptied since (the session
	// taken on, pruned and collected meanwhile) would take the tombstone,
	// and the base marker set above it would lower the session's base
	// to steps gc has deleted: neither removed nor readable.
	if longAgo(w.clock(), read) {
		again, _, err := w.liveHead(ctx, session)
		if err != nil {
			return nil, ofSession("remove "+session, session, err)
		}
		if again != head {
			return nil, fmt.Errorf("remove %s: %w: a writer committed %s@%d meanwhile; nothing removed", session, ErrConflict, session, head+1)
		}
	}
	err = w.repo.Fence(ctx, session, head+1)
	w.forget(session)
	if errors.Is(err, manifest.ErrRevived) {
		return nil, fmt.Errorf("remove %s: %w: a writer committed %s@%d meanwhile; nothing removed", session, ErrConflict, session, head+1)
	}
	if err != nil {
		return nil, fmt.Errorf("remove %s: %w", session, err)
	}
	return &PruneResult{Session: session, Head: head, OldBase: base, NewBase: head + 2, Steps: head + 1 - base}, nil
}

// forget makes this workspace's *Session for name re-read its head from
// the store at its next commit.
func (w *Workspace) forget(name string) {
	w.mu.Lock()
	s := w.sessions[name]
	w.mu.Unlock()
	if s != nil {
		s.mu.Lock()
		s.head, s.index = nil, nil
		s.mu.Unlock()
	}
}
