package cairn

import (
	"context"

	"github.com/cairnlog/cairn/manifest"
)

// Problem is one failure found by Verify: the object (if known), the
// step whose reading failed, and why.
type Problem = manifest.Problem

// VerifyReport is the result of Verify.
type VerifyReport = manifest.VerifyReport

// Verify re-reads and re-hashes everything reachable from the named
// sessions (all sessions if none are named): every step object's
// checksum, every manifest against its child's parent hash, and every
// blob and node of every step's state. It reports every bad object it
// finds rather than stopping at the first; its error is only for
// failures to run at all, and ErrNotFound for a named session that has
// no steps (a typo must not verify clean) or was removed (ErrRemoved).
func (w *Workspace) Verify(ctx context.Context, sessions ...string) (_ *VerifyReport, err error) {
	if err := w.enterCtx(ctx, "verify"); err != nil {
		return nil, err
	}
	defer w.exit()
	defer w.classifyTo(&err)
	for _, name := range sessions {
		if manifest.ValidSession(name) != nil {
			continue // refused by the verifier
		}
		head, base, err := w.repo.FindHeadBase(ctx, name)
		switch {
		case err != nil:
		case head == 0:
			return nil, noStepsErr(name, 0)
		case head < base:
			// Removed by gc's rule; a damaged base marker is not a
			// removal but a problem the verifier reports.
			if removed, _, err := w.removedNow(ctx, name); err == nil && removed {
				return nil, removedErr(name, 0)
			}
		}
	}
	mr, err := w.repo.Verify(ctx, sessions...)
	if err != nil {
		return nil, err
	}
	for i := range mr.Problems {
		p := &mr.Problems[i]
		p.Err = classify(p.Err)
		// An object beyond a read limit is not known to be damaged:
		// say how to raise the limit, not to restore it from a backup.
		if h := LimitHint(p.Err); h != "" {
			p.Effect = LimitEffect(h)
		}
	}
	return mr, nil
}

// LimitEffect is what a verify Problem means (Problem.Effect) when a read
// limit stopped the check rather than damage: hint says how to raise the
// limit (LimitHint, or LimitEnvHint for a command's user).
func LimitEffect(hint string) string {
	return "it may be intact, but this run may not read it, nor check what uses it (" + hint + ")"
}
