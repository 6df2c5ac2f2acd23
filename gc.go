package cairn

import (
	"context"
	"fmt"
	"time"

	"github.com/cairnlog/cairn/manifest"
)

// DefaultGrace is how long an object must have been unreachable, and how
// old it must be, before GC deletes it, unless GCOptions says otherwise.
const DefaultGrace = time.Hour

// SlotFenceAge is the least age of a step object (a step or a tombstone)
// before GC deletes it, whatever GCOptions.Grace says: deleting it empties
// its slot, and a writer paused with the step below as its head would
// fill the slot again. Such a writer got its head before the slot was
// written, so by then it has held that head longer than HeadTrust.
const SlotFenceAge = manifest.SlotFenceAge

// HeadTrust is how long a Session trusts the head it holds (or a head
// cache saved that long ago) without hearing from the store: past it, its
// next commit reads the store's head first, and is a conflict if that is
// another step. It costs one head read after an idle spell, no more.
const HeadTrust = manifest.HeadTrust

// ForkPinGrace is the least time gc keeps honouring the pin of a fork
// that has not landed, whatever GCOptions.Grace says; after it gc fences
// the fork's slot, and a forker that resumes later fails with
// ErrConflict (see docs/reliability.md). Safety never depends on it.
const ForkPinGrace = manifest.ForkPinGrace

// GCOptions tune a GC run.
type GCOptions struct {
	// Grace: an object is deleted only if a previous run already found it
	// unreachable at least Grace ago and it was written at least Grace
	// ago. No writer or forker depends on it: what they may still name is
	// kept or fenced whatever the grace (docs/reliability.md); it is a
	// margin for readers and for recovering from mistakes.
	// Negative means DefaultGrace; zero is allowed.
	Grace time.Duration
	// DryRun reports what the run would do and changes nothing.
	DryRun bool
	// Now, if set, is taken as the store's clock (tests); zero: gc reads
	// the store's clock, from an object it writes, so that ages are never
	// measured on a machine's clock that is off (a dry run, which writes
	// nothing, measures on this machine's). It must be in years 1 to
	// 9999 (UTC), which the gc state can record; another is ErrInvalid,
	// before the run does anything.
	Now time.Time
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

// GC deletes data objects that no live step needs (docs/maintenance.md).
// It lists the data objects, then marks every object reachable from
// every live step of every session, then sweeps in two phases: an
// unreachable object becomes a candidate, recorded in the gc state
// object; a later run deletes it only if it is still unreachable, it was
// first found so at least Grace ago, and it was written at least Grace
// ago. GC takes no lock: a step committed after the listing is simply
// not examined, and one committed before it is reachable from its
// session's head. A failure to read any live step aborts the run before
// anything is deleted.
//
// A run that fails after it changed the store (a delete, a tombstone or
// the gc state's write failed) returns its error together with a report
// of what it did: Deleted and DeletedKeys are the objects it deleted,
// Tombstones the fences it wrote, and Candidates counts the unreachable
// objects still there. A failure before that returns a nil report, and
// deleted nothing.
func (w *Workspace) GC(ctx context.Context, opts GCOptions) (_ *GCReport, err error) {
	if err := w.enterCtx(ctx, "gc"); err != nil {
		return nil, err
	}
	defer w.exit()
	defer w.classifyTo(&err)
	if !opts.Now.IsZero() && !manifest.GCTimeOK(opts.Now) {
		return nil, invalid(fmt.Errorf("gc: GCOptions.Now %s is outside the years 1 to 9999 that the gc state can record; nothing deleted",
			opts.Now.UTC().Format(time.RFC3339)))
	}
	if opts.Grace < 0 {
		opts.Grace = DefaultGrace
	}
	rep, err := w.repo.GC(ctx, manifest.GCOptions{Grace: opts.Grace, DryRun: opts.DryRun, Now: opts.Now, Clock: w.clock})
	if rep == nil {
		return nil, err
	}
	return (*GCReport)(rep), err
}
