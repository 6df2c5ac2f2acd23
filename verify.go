package cairn

import (
	"context"
	"fmt"

	"github.com/cairnlog/cairn/manifest"
)

// Problem is one failure found by Verify.
type Problem struct {
	Object string // the key of the bad or missing object, if known
	Step   string // session@step whose reading failed
	Err    error
}

func (p Problem) String() string {
	if p.Object != "" {
		return fmt.Sprintf("%s: %s: %v", p.Object, p.Step, p.Err)
	}
	return fmt.Sprintf("%s: %v", p.Step, p.Err)
}

// VerifyReport is the result of Verify.
type VerifyReport struct {
	Sessions int
	Steps    int
	Objects  int // step objects and packs read and checked
	Blobs    int // distinct blobs and nodes re-hashed
	Problems []Problem
}

// Verify re-reads and re-hashes everything reachable from the named
// sessions (all sessions if none are named): every step object's
// checksum, every manifest against its child's parent hash, and every
// blob and node of every step's state. It reports every bad object it
// finds rather than stopping at the first; its error is only for
// failures to run at all, and ErrNotFound for a named session that has
// no steps (a typo must not verify clean).
func (w *Workspace) Verify(ctx context.Context, sessions ...string) (_ *VerifyReport, err error) {
	defer classifyTo(&err)
	for _, name := range sessions {
		if manifest.ValidSession(name) != nil {
			continue // refused by the verifier
		}
		if n, err := w.repo.FindHead(ctx, name); err == nil && n == 0 {
			return nil, fmt.Errorf("verify %s: %w: %w", name, ErrNotFound, manifest.ErrNoSession)
		}
	}
	mr, err := w.repo.Verify(ctx, sessions...)
	if err != nil {
		return nil, err
	}
	rep := &VerifyReport{Sessions: mr.Sessions, Steps: mr.Steps, Objects: mr.Objects, Blobs: mr.Blobs}
	for _, p := range mr.Problems {
		rep.Problems = append(rep.Problems, Problem{Object: p.Object, Step: p.Step, Err: classify(p.Err)})
	}
	return rep, nil
}
