package manifest

import (
	"context"
	"fmt"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/manifest/tree"
)

// MaxForkLevels bounds the forks a walk down one history passes through
// (HistoryStep). A legitimate chain has one level per fork of a fork, so
// an agent that keeps forking its newest branch (a retry, a tree search)
// builds one as long as its history: 64, the bound of earlier versions,
// refused show, diff, checkout and fork of old steps of such a session
// while log, which reads step by step, walked it whole. The walk cannot
// loop (each level's step number is below the last, and a session it
// entered before ends it), but a chain read from a store is not trusted
// to end (I6): a hostile store may make one up as it is read. Each level
// costs a LIST and a GET, up to some 131,000 requests at this bound, past
// which a walk is taken for a store's attack: a tree.LimitError naming
// "MaxForkLevels". Repo.SetMaxForkLevels (Limits.MaxForkLevels) sets
// another bound.
const MaxForkLevels = 1 << 16

// HistoryStep returns the step numbered n of the history that goes down
// from step top through its parents, across forks: a fork's history
// below its first step is the history of the step it was forked from. n
// must not be above top's number.
//
// Within one session a history's steps are consecutive slots, each
// written once and naming the one below as its parent, so the walk reads
// no step between: in each session the history passes through, it finds
// the session's oldest slot (one LIST) and, when that is above n (the
// session is a fork too), reads that first step (one GET) and goes on to
// its parent. It passes through at most the sessions SetMaxForkLevels
// allows (MaxForkLevels by default); each step it enters a session by
// (top, and each fork's parent) is checked against the hash its child
// recorded. The cost is one LIST and one GET
// per fork level, never the session's length.
//
// n must be at or above the base of the session whose history it is
// (ReadBase): below it the history is pruned. That is also what makes a
// session's oldest slot at or below n part of the history: a fork takes
// its source's base, so a history that enters a session whose name was
// removed and written again (its new first step has no parent, above
// the old steps) never reaches below that new first step.
//
// If the history starts above n (a first step with no parent), it
// returns a nil step and the number of that first step. A step the
// history names that the store does not hold is cas.ErrNotFound.
func (r *Repo) HistoryStep(ctx context.Context, top Pointer, n uint64) (st *Step, start uint64, err error) {
	levels := int(r.maxForkLevels.Load())
	if levels <= 0 {
		levels = MaxForkLevels
	}
	p := top
	for range levels {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		if p.Number < n {
			return nil, 0, fmt.Errorf("step %d is above %s@%d, where the history is read from", n, p.Session, p.Number)
		}
		if p.Number == n {
			st, err := r.ReadPointer(ctx, p)
			return st, 0, err
		}
		first, err := r.FirstStep(ctx, p.Session)
		switch {
		case err != nil:
			return nil, 0, err
		case first == 0 || first > p.Number:
			// The step the history entered by is gone.
			return nil, 0, fmt.Errorf("read %s@%d: %w", p.Session, p.Number, cas.ErrNotFound)
		case first <= n:
			// Step n is in this session's own run of slots.
			st, err := r.ReadStep(ctx, p.Session, n)
			return st, 0, err
		}
		fst, err := r.ReadStep(ctx, p.Session, first)
		if err != nil {
			return nil, 0, err
		}
		switch {
		case fst.Parent == nil:
			return nil, first, nil
		case fst.Parent.Number >= first:
			return nil, 0, fmt.Errorf("%w: %s: its parent, %s@%d, is not below it", cas.ErrCorrupt, DescribeKey(fst.Key), fst.Parent.Session, fst.Parent.Number)
		}
		p = *fst.Parent
	}
	// Said where the walk stopped, the step it was to enter next: a
	// chain this long is a store's attack or a tree search's, and that
	// step is where to look (or to read on from, with a higher bound).
	return nil, 0, &tree.LimitError{Limit: "MaxForkLevels", Max: int64(levels), Unit: "forks of forks",
		What: fmt.Sprintf("the history from %s@%d down to step %d, which stopped at %s@%d", top.Session, top.Number, n, p.Session, p.Number)}
}
