package cairn

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
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
func (w *Workspace) Verify(ctx context.Context, sessions ...string) (*VerifyReport, error) {
	for _, name := range sessions {
		if manifest.ValidSession(name) != nil {
			continue // refused below
		}
		if n, err := w.repo.FindHead(ctx, name); err == nil && n == 0 {
			return nil, fmt.Errorf("verify %s: %w: %w", name, ErrNotFound, manifest.ErrNoSession)
		}
	}
	if len(sessions) == 0 {
		// Every session with a marker, and every one with step objects:
		// a session whose marker is gone is still checked (and reported).
		seen := map[string]bool{}
		add := func(n string) error {
			if !seen[n] {
				seen[n] = true
				sessions = append(sessions, n)
			}
			return nil
		}
		if err := w.repo.Sessions(ctx, add); err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		if err := w.repo.StepSessions(ctx, add); err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		sort.Strings(sessions)
	}
	v := &verifier{ws: w, rep: &VerifyReport{}, objects: map[string]bool{}, blobs: map[cas.ID]bool{}, steps: map[string]uint64{}}
	for _, name := range sessions {
		if err := manifest.ValidSession(name); err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		v.rep.Sessions++
		v.session(ctx, name)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	sort.Slice(v.rep.Problems, func(i, j int) bool { return v.rep.Problems[i].String() < v.rep.Problems[j].String() })
	return v.rep, nil
}

type verifier struct {
	ws      *Workspace
	rep     *VerifyReport
	objects map[string]bool
	blobs   map[cas.ID]bool
	steps   map[string]uint64 // step key -> the floor it was walked to
}

func (v *verifier) problem(object, step string, err error) {
	v.rep.Problems = append(v.rep.Problems, Problem{Object: object, Step: step, Err: err})
}

func (v *verifier) session(ctx context.Context, name string) {
	n, err := v.ws.repo.FindHead(ctx, name)
	if err != nil {
		v.problem(manifest.HintKey(name), name, err)
		return
	}
	if n == 0 {
		return // a marker without steps: a commit that never landed
	}
	floor, err := v.ws.base(ctx, name)
	if err != nil {
		v.problem(manifest.BaseKey(name), name, err)
		return
	}
	if err := v.ws.repo.CheckMarker(ctx, name); err != nil {
		v.problem(manifest.SessionKey(name), name, err)
	}
	if err := v.ws.repo.CheckHint(ctx, name, n); err != nil {
		v.problem(manifest.HintKey(name), name, err)
	}
	v.chain(ctx, name, n, floor, nil)
}

// chain walks a chain of steps down from session@n, across forks, checking
// each manifest against the hash its child recorded. A step that cannot
// be read does not stop the walk within its session: its number says
// where its parent is.
func (v *verifier) chain(ctx context.Context, session string, n, floor uint64, want *cas.ID) {
	missing := false // the step above was missing too: report a gap once
	for n > 0 && n >= floor {
		key := manifest.StepKey(session, n)
		// Shared history already checked, down to the floor it was
		// walked to: only a walk with a lower floor (a fork whose history
		// goes below its origin's base) goes on, checking what is new.
		done, seen := v.steps[key]
		if seen && done <= floor {
			return
		}
		v.steps[key] = floor
		ref := fmt.Sprintf("%s@%d", session, n)
		st, err := v.ws.repo.ReadStep(ctx, session, n)
		if err != nil {
			gone := errors.Is(err, cas.ErrNotFound)
			if !seen && (!gone || !missing) {
				v.problem(key, ref, err)
			}
			missing = gone
			n, want = n-1, nil
			continue
		}
		missing = false
		if want != nil && st.ID != *want {
			v.problem(key, ref, fmt.Errorf("%w: manifest hashes to %s, but its child names %s", cas.ErrCorrupt, st.ID.Short(), want.Short()))
		}
		if !seen {
			v.rep.Steps++
			v.step(ctx, st, ref)
		}
		if st.Parent == nil {
			return
		}
		id := st.Parent.ID
		session, n, want = st.Parent.Session, st.Parent.Step, &id
	}
}

// step checks every object of a step's layout and every blob its state
// reaches.
func (v *verifier) step(ctx context.Context, st *manifest.Step, ref string) {
	repo := v.ws.repo
	ix := repo.NewIndex()
	for _, key := range manifest.LayoutKeys(st.Layout) {
		one := manifest.Layout{}
		if s, n, ok := manifest.ParseStepKey(key); ok {
			one.Steps = []manifest.Range{{Session: s, First: n, Last: n}}
		} else if s, n, ok := manifest.ParsePackKey(key); ok {
			one.Packs = []manifest.PackRef{{Session: s, Step: n, Level: 1}}
		}
		if err := ix.Load(ctx, one); err != nil {
			if !v.objects[key] {
				v.problem(key, ref, err)
			}
			v.objects[key] = true
			continue
		}
		if !v.objects[key] {
			v.objects[key] = true
			v.rep.Objects++
			// Every copy of every blob, live or not: the walk below
			// reads each id from one object only.
			if _, err := repo.CheckObject(ctx, key, func(err error) { v.problem(key, ref, err) }); err != nil {
				v.problem(key, ref, err)
			}
		}
	}
	v.walk(ctx, ix, st.Root, ref, 0)
}

// walk re-hashes every blob and node below root, reporting each bad one
// and going on with its siblings.
func (v *verifier) walk(ctx context.Context, ix *manifest.Index, root tree.Ref, ref string, depth int) {
	if root.Kind == tree.Inline || v.blobs[root.ID] {
		return
	}
	v.blobs[root.ID] = true
	v.rep.Blobs++
	raw, err := ix.Blob(ctx, root.ID)
	if err != nil {
		v.problem(locKey(ix, root.ID), ref, err)
		return
	}
	if root.Kind != tree.Node {
		return
	}
	if depth > tree.DefaultLimits.MaxDepth {
		v.problem(locKey(ix, root.ID), ref, fmt.Errorf("%w: tree deeper than %d", tree.ErrLimit, tree.DefaultLimits.MaxDepth))
		return
	}
	n, err := tree.DecodeNode(raw, "node "+root.ID.Short())
	if err != nil {
		v.problem(locKey(ix, root.ID), ref, err)
		return
	}
	for _, e := range n.Entries {
		v.walk(ctx, ix, e.Ref, ref, depth+1)
	}
}

func locKey(ix *manifest.Index, id cas.ID) string {
	if loc, ok := ix.Locate(id); ok {
		return loc.Key
	}
	return ""
}
