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
	// ago. It must exceed the longest time a writer may take between
	// writing an object and committing the step that names it.
	// Zero is allowed (tests); negative counts as zero.
	Grace time.Duration
	// DryRun reports what the run would do and changes nothing.
	DryRun bool
	// Now overrides the clock (tests); zero means time.Now().
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
	// Deleted objects (or, in a dry run, objects that would be deleted).
	Deleted      int
	DeletedBytes int64
	DeletedKeys  []string
	// Tombstones: removed sessions' newest steps replaced by a tombstone
	// (counted in Deleted too; in a dry run, those that would be).
	// TombstoneKeys are their keys, a subset of DeletedKeys.
	Tombstones    int
	TombstoneKeys []string
	Duration      time.Duration
	DryRun        bool
	// Note explains anything unusual (an unreadable gc state, say).
	Note string
}

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
func (r *Repo) GC(ctx context.Context, opts GCOptions) (*GCReport, error) {
	start := time.Now()
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	grace := max(opts.Grace, 0)
	rep := &GCReport{DryRun: opts.DryRun}
	prev, err := r.readGCState(ctx)
	if errors.Is(err, cas.ErrCorrupt) {
		// Losing the candidates only delays deletions by one run.
		rep.Note = fmt.Sprintf("ignored an unreadable gc state (%v); candidates start over", err)
		prev = NewGCState(time.Time{})
	} else if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	l, err := r.list(ctx)
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	rep.Objects, rep.Bytes = len(l.objects), l.bytes
	live, bases, err := r.mark(ctx, l, nil)
	if err != nil {
		return nil, fmt.Errorf("gc: %w; nothing deleted", err)
	}
	rep.LiveSteps = live.steps

	// A removed session's newest step object is replaced by a tombstone
	// rather than deleted (see isTombstone).
	removedTop := map[string]bool{}
	for sess, ns := range l.steps {
		if top := ns[len(ns)-1]; top < bases[sess] {
			removedTop[StepKey(sess, top)] = true
		}
	}

	next := NewGCState(now)
	var doomed []string
	for key, info := range l.objects {
		if live.has(key) {
			rep.LiveObjects++
			rep.LiveBytes += info.Size
			continue
		}
		first, seen := prev.Candidates[key]
		if !seen || first.After(now) {
			first = now
		}
		old := info.ModTime.IsZero() || now.Sub(info.ModTime) >= grace
		if seen && now.Sub(first) >= grace && old {
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
	for _, key := range doomed {
		if removedTop[key] {
			rep.TombstoneKeys = append(rep.TombstoneKeys, key)
		}
	}
	if opts.DryRun {
		rep.Tombstones = len(rep.TombstoneKeys)
		rep.Duration = time.Since(start)
		return rep, nil
	}
	// A commit to a removed session since the listing builds on its old
	// head and names that head's layout again: sweep nothing this run.
	if len(doomed) > 0 {
		for sess, top := range live.removed {
			head, err := r.FindHead(ctx, sess)
			if err != nil {
				return nil, fmt.Errorf("gc: %w; nothing deleted", err)
			}
			if head != top {
				rep.Note = fmt.Sprintf("removed session %s got step %d during the run; nothing deleted", sess, head)
				rep.Deleted, rep.DeletedBytes, rep.DeletedKeys, rep.TombstoneKeys = 0, 0, nil, nil
				doomed = nil
				break
			}
		}
	}
	// Tombstones first: an interrupted sweep then leaves only garbage.
	for _, key := range doomed {
		if removedTop[key] {
			sess, n, _ := ParseStepKey(key)
			if err := r.writeTombstone(ctx, sess, n); err != nil {
				return nil, fmt.Errorf("gc: %w", err)
			}
			rep.Tombstones++
		}
	}
	for _, key := range doomed {
		if removedTop[key] {
			continue
		}
		if err := r.store.Delete(ctx, key); err != nil {
			return nil, fmt.Errorf("gc: delete %s: %w", key, err)
		}
		r.forget(key)
	}
	if err := r.writeGCState(ctx, next); err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	rep.Duration = time.Since(start)
	return rep, nil
}
