package cairn

import (
	"context"
	"errors"

	"github.com/cairnlog/cairn/manifest"
)

// SessionUsage is what one session costs.
type SessionUsage struct {
	Session string `json:"session"`
	// Steps is the number of live steps in its history (forks count the
	// history they share with their origin).
	Steps int `json:"steps"`
	// Objects and StoredBytes: the data objects its live steps use.
	Objects     int   `json:"objects"`
	StoredBytes int64 `json:"stored_bytes"`
	// UniqueBytes are in objects no other session uses; SharedBytes in
	// objects that other sessions use too. Removing the session would
	// free at most UniqueBytes.
	UniqueBytes int64 `json:"unique_bytes"`
	SharedBytes int64 `json:"shared_bytes"`
	// LogicalBytes is what its live steps' states would take stored in
	// full, one copy per step: the raw bytes of every blob and node each
	// state reaches.
	LogicalBytes int64 `json:"logical_bytes"`
	// DedupRatio is LogicalBytes / StoredBytes.
	DedupRatio float64 `json:"dedup_ratio"`
}

// Usage is what a workspace costs.
type Usage struct {
	// Sessions has one entry per live session measured, sorted by name;
	// it is empty, not nil, when there is none.
	Sessions []SessionUsage `json:"sessions"`
	// Objects and Bytes count every data object (step objects and packs).
	Objects int   `json:"objects"`
	Bytes   int64 `json:"bytes"`
	// Live* count those some live step uses; Garbage* the rest, which GC
	// will delete.
	LiveObjects    int   `json:"live_objects"`
	LiveBytes      int64 `json:"live_bytes"`
	GarbageObjects int   `json:"garbage_objects"`
	GarbageBytes   int64 `json:"garbage_bytes"`
	// LogicalBytes sums the sessions' logical bytes; DedupRatio is it
	// over LiveBytes.
	LogicalBytes int64   `json:"logical_bytes"`
	DedupRatio   float64 `json:"dedup_ratio"`
}

// Usage measures stored bytes per session and for the workspace. With
// names it reports only those sessions (the workspace totals still cover
// everything). It reads every live step's manifest and, for the logical
// sizes, the objects its state uses: a cost like Verify's.
//
// A session the store's damage keeps from being read does not hide the
// others: Usage returns what it measured together with an
// *UnreadableError naming each such session. Their objects count as live
// (what they share with other sessions is unknown), so the garbage
// figures may be short of what gc would free once the damage is repaired.
func (w *Workspace) Usage(ctx context.Context, names ...string) (_ *Usage, err error) {
	if err := w.enterCtx(ctx, "usage"); err != nil {
		return nil, err
	}
	defer w.exit()
	defer w.classifyTo(&err)
	mu, err := w.repo.Usage(ctx, names...)
	if errors.Is(err, manifest.ErrNoSession) {
		// A named session with no steps: say whether it was removed, as
		// every other command does, or never had any.
		for _, n := range names {
			var nf *NotFoundError
			if _, herr := w.readHead(ctx, n); errors.As(herr, &nf) {
				return nil, nf
			}
		}
	}
	if err != nil {
		return nil, err
	}
	u := &Usage{
		Objects: mu.Objects, Bytes: mu.Bytes, LiveObjects: mu.LiveObjects, LiveBytes: mu.LiveBytes,
		GarbageObjects: mu.GarbageObjects, GarbageBytes: mu.GarbageBytes,
		LogicalBytes: mu.LogicalBytes, DedupRatio: mu.DedupRatio,
		Sessions: make([]SessionUsage, 0, len(mu.Sessions)), // [] in JSON when none is live, never null
	}
	for _, su := range mu.Sessions {
		u.Sessions = append(u.Sessions, SessionUsage(su))
	}
	if len(mu.Unreadable) > 0 {
		damaged := &UnreadableError{}
		for _, d := range mu.Unreadable {
			damaged.Sessions = append(damaged.Sessions, d.Session)
			// Each said in words on its own (the store as the user
			// named it, never a key), so that one session's damage
			// does not stand for all of them.
			damaged.Errs = append(damaged.Errs, w.refused(classify(d.Err), ""))
		}
		return u, damaged
	}
	return u, nil
}
