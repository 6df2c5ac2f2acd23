package cairn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/internal/targetdir"
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

// StepRef names a step by session, number and manifest hash.
type StepRef struct {
	Session string `json:"session"`
	Number  uint64 `json:"step"`
	ID      string `json:"id"`
}

// String returns "session@number".
func (r StepRef) String() string { return fmt.Sprintf("%s@%d", r.Session, r.Number) }

// ProcessWriter returns the name this process gives itself in the steps
// it commits (Step.Writer): its host name and process id. cairn run's
// record of a work directory keeps it before a commit from the directory
// starts, to know that commit's step for the directory's own if the
// process is killed before it hears the step landed.
func ProcessWriter() string { return manifest.ProcessWriter() }

func refOf(p *manifest.Pointer) *StepRef {
	if p == nil {
		return nil
	}
	return &StepRef{Session: p.Session, Number: p.Number, ID: p.ID.String()}
}

// Step is one committed step. Its fields are what the manifest says;
// its methods read the state. The fields are the caller's to change (on
// a copy, say): its methods, and a Fork or Diff of it, go by the step
// as read, whatever the fields say since.
type Step struct {
	Session string
	Number  uint64
	ID      cas.ID // BLAKE3 of the manifest: pins the step and, through it, its whole past
	Parent  *StepRef
	Origin  *StepRef // set on the first step of a fork: the step it copies
	Time    time.Time
	Status  Status
	Writer  string
	Record  json.RawMessage // nil if none
	Kind    Kind
	// Truncated is true if older history was pruned away.
	Truncated bool
	// StoredBytes is the size of this step's object: its manifest plus
	// the new blobs it carried.
	StoredBytes int64
	// NewBlobs is how many new blobs the step stored, NewBlobBytes their
	// raw (uncompressed) size, and ManifestBytes the size of its manifest.
	NewBlobs      int
	NewBlobBytes  int64
	ManifestBytes int64
	// IdempotencyKey is the key the commit that wrote the step carried
	// (CommitOptions.IdempotencyKey), or "".
	IdempotencyKey string
	// Replayed is true on a step Commit returned without writing it: an
	// earlier try of the same commit (same idempotency key, parent,
	// state, record and status) had written it, and its answer was lost.
	Replayed bool

	ws *Workspace
	m  *manifest.Step
	// via is the session whose history the step was read in, when that
	// is not its own: a fork's step below the fork's first step (b@2 of
	// a fork b of a@3 is a@2), and the steps a fork's Log yields. Log and
	// Fork follow that history, which holds the step whether or not its
	// own session has pruned it or been removed since.
	via string
}

// history returns the session whose history the step was read in: its
// own, or the fork's it was read through (via). Its own is the one it
// was read from (st.m), not its exported Session, which a caller may
// have set: the history walked, forked or pinned is the step's.
func (st *Step) history() string {
	if st.via != "" {
		return st.via
	}
	return st.m.Session
}

// kind is the step's state kind as read (st.m), not its exported Kind,
// which a caller may have set: a JSON state is never read as a
// directory, or said to be a damaged one.
func (st *Step) kind() Kind { return Kind(st.m.Kind) }

// inHistory returns st as read in the history of session via.
func (st *Step) inHistory(via string) *Step {
	if via != st.m.Session {
		st.via = via
	}
	return st
}

func newStep(ws *Workspace, m *manifest.Step) *Step {
	st := &Step{
		Session: m.Session, Number: m.Number, ID: m.ID,
		Parent: refOf(m.Parent), Origin: refOf(m.Origin),
		Time: m.Time, Status: Status(m.Status), Writer: m.Writer, Kind: Kind(m.Kind),
		Truncated: m.Truncated, StoredBytes: m.Size,
		NewBlobs: m.Blobs, NewBlobBytes: m.RawBlobBytes, ManifestBytes: m.ManifestBytes,
		IdempotencyKey: m.IdempotencyKey, ws: ws, m: m,
	}
	if len(m.Record) > 0 {
		st.Record = json.RawMessage(m.Record)
	}
	return st
}

// readable refuses a step that was not read through a workspace: nil, a
// zero Step, or one built or decoded by hand from its exported fields. It
// names no state to read, and reading it crashed the program.
func (st *Step) readable(op string) error {
	if st == nil {
		return invalid(fmt.Errorf("%s: no step given", op))
	}
	if st.m == nil || st.ws == nil {
		return invalid(fmt.Errorf("%s %s: this step was not read from a workspace (only a step that Commit, Head, Step, Resolve, Log or Fork returned has a state to read)", op, st))
	}
	return nil
}

// String returns "session@number": of the step as read, whatever its
// exported fields were set to since ("<nil>" for a nil Step; for a step
// not read from a workspace, its fields).
func (st *Step) String() string {
	switch {
	case st == nil:
		return "<nil>"
	case st.m != nil:
		return fmt.Sprintf("%s@%d", st.m.Session, st.m.Number)
	}
	return fmt.Sprintf("%s@%d", st.Session, st.Number)
}

// enter begins a call on the step (Workspace.enter) named by op
// ("read"), given ctx: a nil ctx fails it, and so does a step not read
// from a workspace (readable).
func (st *Step) enter(ctx context.Context, op string) error {
	if ctx == nil {
		return nilContext(op + " " + st.String())
	}
	if err := st.readable(op); err != nil {
		return err
	}
	return st.ws.enter(op + " " + st.String())
}

// reader returns a tree reader of the step's state, through the
// workspace's view of its layout (as Diff reads): the objects of the
// layout that no earlier read of the workspace learned are read, in
// parallel, and no other, so a reader of each step of a session in turn
// reads about one object per step, where an index loaded for each read
// read and indexed the whole layout again. Every blob is still read
// from an object of the layout and re-hashed (I1).
func (st *Step) reader(ctx context.Context) (*tree.Reader, error) {
	v, err := st.ws.repo.View(ctx, st.m.Layout)
	if err != nil {
		return nil, fmt.Errorf("read state of %s: %w", st, err)
	}
	return &tree.Reader{Src: v, Limits: st.ws.treeLimits()}, nil
}

// JSON returns the step's state as compact JSON. It fails for a directory state.
func (st *Step) JSON(ctx context.Context) (_ []byte, err error) {
	if err := st.enter(ctx, "read"); err != nil {
		return nil, err
	}
	defer st.ws.exit()
	defer st.ws.classifyTo(&err)
	if st.kind() != KindJSON {
		return nil, invalid(fmt.Errorf("read %s: state is a directory, not JSON", st))
	}
	r, err := st.reader(ctx)
	if err != nil {
		return nil, err
	}
	b, err := r.JSON(ctx, st.m.Root)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", st, err)
	}
	return b, nil
}

// WriteJSON writes the step's JSON state to w. A state beyond a read
// limit (Limits) writes nothing: the whole state is checked against the
// limits first, reading its nodes, not its values. The state is
// streamed: a WriteJSON that fails later (a damaged object, a cancelled
// ctx, w's own error) may have written a part of it to w, so a caller
// that must not keep a part writes to a temporary file or buffer and
// keeps it only on a nil error. An error of w's is returned as w gave
// it.
func (st *Step) WriteJSON(ctx context.Context, w io.Writer) (err error) {
	if err := st.enter(ctx, "read"); err != nil {
		return err
	}
	if w == nil {
		return nilArg("read "+st.String(), "writer", "w")
	}
	defer st.ws.exit()
	defer st.ws.classifyTo(&err)
	if st.kind() != KindJSON {
		return invalid(fmt.Errorf("read %s: state is a directory, not JSON", st))
	}
	r, err := st.reader(ctx)
	if err != nil {
		return err
	}
	// Nothing is written of a state beyond a limit: a show into a file
	// or an HTTP answer is whole or absent, never cut short.
	if err := r.CheckJSON(ctx, st.m.Root); err != nil {
		return fmt.Errorf("read %s: %w", st, err)
	}
	out := &seenWriter{w: w}
	if err := r.WriteJSON(ctx, out, st.m.Root); err != nil {
		if out.err != nil && errors.Is(err, out.err) {
			// w's own failure (a full disk, a closed pipe), as w said
			// it: nothing was wrong with the read.
			return out.err
		}
		return fmt.Errorf("read %s: %w", st, err)
	}
	return nil
}

// seenWriter is w, remembering the first error w returned.
type seenWriter struct {
	w   io.Writer
	err error
}

func (s *seenWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if err != nil && s.err == nil {
		s.err = err
	}
	return n, err
}

// FileMode is the type of an entry of a directory state.
type FileMode uint8

// File modes. Their values are the stored ones (TestStoredValues).
const (
	ModeFile    FileMode = 0 // a regular file
	ModeExec    FileMode = 1 // an executable file
	ModeSymlink FileMode = 2 // a symbolic link
	ModeDir     FileMode = 3 // a directory
)

// String returns "file", "exec", "symlink" or "dir".
func (m FileMode) String() string {
	switch m {
	case ModeExec:
		return "exec"
	case ModeSymlink:
		return "symlink"
	case ModeDir:
		return "dir"
	}
	return "file"
}

// FileInfo describes one entry of a directory state.
type FileInfo struct {
	Path string // slash-separated, relative to the state root
	Mode FileMode
	Size int64 // bytes of a file, target length of a symlink
}

// Files lists a directory state's entries in path order.
func (st *Step) Files(ctx context.Context) (_ []FileInfo, err error) {
	if err := st.enter(ctx, "list"); err != nil {
		return nil, err
	}
	defer st.ws.exit()
	defer st.ws.classifyTo(&err)
	if st.kind() != KindDir {
		return nil, invalid(fmt.Errorf("list %s: state is JSON, not a directory", st))
	}
	r, err := st.reader(ctx)
	if err != nil {
		return nil, err
	}
	var out []FileInfo
	err = r.WalkDir(ctx, st.m.Root, func(fi tree.FileInfo) error {
		out = append(out, FileInfo{Path: fi.Path, Mode: FileMode(fi.Mode), Size: fi.Size})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", st, err)
	}
	return out, nil
}

// Checkout writes the step's state into dir, which must not exist or be
// empty: a directory state as its files, a JSON state as dir/state.json.
// Entries that would escape dir are refused. dir is taken as Dir takes a
// path, once, as the checkout starts: a ".." after a symbolic link is
// applied to the link's target, as the kernel does, so link/../out is
// out beside the link's target, and a dir that is a link to a directory
// is written through (a link to nothing is ErrInvalid). A state beyond a
// read limit (Limits) writes nothing, not even dir: the whole state is
// checked against the limits first, reading its nodes, not its files. A
// checkout that fails part-way (a damaged object, a cancelled ctx)
// removes what it wrote. dir is locked while it is written (on Unix, as
// cairn run locks its work directory): of two checkouts into one
// directory at once, in one program or two, one writes and the other is
// ErrInvalid, the directory in use.
func (st *Step) Checkout(ctx context.Context, dir string) (err error) {
	if err := st.enter(ctx, "checkout"); err != nil {
		return err
	}
	defer st.ws.exit()
	defer st.ws.classifyTo(&err)
	given := dir
	// A link to a directory is written through; a link to nothing is
	// not made into one at its target (mkdir of the path fails there).
	if fi, err := os.Lstat(given); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if _, err := os.Stat(given); errors.Is(err, fs.ErrNotExist) {
			return invalid(fmt.Errorf("checkout %s: directory %s is a symbolic link to nothing", st, given))
		}
	}
	if dir, err = resolveDir(dir); err != nil {
		return fmt.Errorf("checkout %s: %w", st, err)
	}
	// The caller's directory, not the store, is wrong: ErrInvalid, said
	// before anything is read or written.
	switch fi, err := os.Stat(dir); {
	case err == nil && !fi.IsDir():
		return invalid(fmt.Errorf("checkout %s: %s is a file, not a directory", st, given))
	case errors.Is(err, syscall.ENOTDIR):
		return invalid(fmt.Errorf("checkout %s: directory %s cannot be made: a part of its path is a file", st, given))
	}
	if des, err := os.ReadDir(dir); err == nil && len(des) > 0 {
		return invalid(fmt.Errorf("checkout %s: directory %s is not empty", st, given))
	}
	// Two checkouts into one new or empty directory at once would both
	// find it empty and fill it with their two states mixed, each saying
	// it succeeded: the directory is made and locked (as cairn run locks
	// its work directory) and found empty under the lock. One this
	// checkout made is removed again if it fails.
	unmake, err := targetdir.Make(dir)
	if err != nil {
		return fmt.Errorf("checkout %s: directory %s cannot be made: %w", st, given, err)
	}
	defer func() {
		if err != nil {
			unmake()
		}
	}()
	if !targetdir.IsHeld(ctx, dir) {
		unlock, err := targetdir.Lock(dir)
		switch {
		case errors.Is(err, targetdir.ErrLocked):
			return invalid(fmt.Errorf("checkout %s: directory %s is in use: another checkout or cairn run is writing into it", st, given))
		case err == nil:
			defer unlock()
		} // a filesystem that cannot lock: unguarded
		if des, err := os.ReadDir(dir); err == nil && len(des) > 0 {
			return invalid(fmt.Errorf("checkout %s: directory %s is not empty", st, given))
		}
	}
	r, err := st.reader(ctx)
	if err != nil {
		return err
	}
	if st.kind() == KindDir {
		if err := r.Checkout(ctx, st.m.Root, dir); err != nil {
			return fmt.Errorf("checkout %s: %w", st, err)
		}
		return nil
	}
	// A state beyond a limit writes nothing, not part of state.json.
	if err := r.CheckoutJSON(ctx, st.m.Root, dir, "state.json"); err != nil {
		return fmt.Errorf("checkout %s: %w", st, err)
	}
	return nil
}

// StateID identifies a state's content, as a commit stores it: two states
// (or a state and a step's) are the same exactly when their StateIDs are
// equal. Compare them with ==.
type StateID struct {
	kind manifest.StateKind
	root string
}

// StateIDOf returns the StateID of state, to compare it with steps'
// (Step.StateID). It reads the state (a directory's files, all of them)
// and hashes it, but neither reads nor writes a store. A state that
// cannot be built (a directory that cannot be read, a document that is
// not JSON or not UTF-8, a Patch, which needs a session's head) is an
// error matching ErrInvalid, as its commit would be.
func StateIDOf(state State) (_ StateID, err error) {
	if state == nil {
		return StateID{}, invalid(errors.New("no state"))
	}
	if ss, ok := state.(stepState); ok {
		// A step not read from a workspace has no state: its zero
		// StateID is no answer (two of them would compare equal).
		if err := ss.st.readable("state id of"); err != nil {
			return StateID{}, err
		}
		return ss.st.StateID(), nil
	}
	kind, root, err := state.build(discard{}, nil)
	if err != nil {
		return StateID{}, classify(err)
	}
	return stateID(kind, root), nil
}

// StateID returns the StateID of the step's state. It reads nothing. A
// step not read from a workspace (a zero Step) has the zero StateID,
// which no state has.
func (st *Step) StateID() StateID {
	if st == nil || st.m == nil {
		return StateID{}
	}
	return stateID(st.m.Kind, st.m.Root)
}

func stateID(kind manifest.StateKind, root tree.Ref) StateID {
	if root.Kind == tree.Inline {
		return StateID{kind, string(byte(root.Kind)) + string(root.Data)}
	}
	return StateID{kind, string(byte(root.Kind)) + string(root.ID[:])}
}

// ParentStep reads the step's parent (nil, nil for a first step).
func (st *Step) ParentStep(ctx context.Context) (_ *Step, err error) {
	if err := st.enter(ctx, "parent of"); err != nil {
		return nil, err
	}
	defer st.ws.exit()
	return st.parentStep(ctx)
}

// parentStep is ParentStep for a call already in flight.
func (st *Step) parentStep(ctx context.Context) (_ *Step, err error) {
	if err := st.readable("parent of"); err != nil {
		return nil, err
	}
	defer st.ws.classifyTo(&err)
	if st.m.Parent == nil {
		return nil, nil
	}
	p, err := st.ws.repo.ReadPointer(ctx, *st.m.Parent)
	if err != nil {
		return nil, fmt.Errorf("parent of %s: %w", st, err)
	}
	return newStep(st.ws, p).inHistory(st.history()), nil
}

// Log calls fn for st and each of its ancestors, newest first. Each
// parent's manifest is checked against the hash its child recorded. The
// walk ends at the base of st's session (see Workspace.Prune), or, for a
// step read in a fork's history (a fork's step below its first step, or
// one its Log yielded), at the fork's base: that history holds the step
// and its ancestors whatever their own session did since. The last step
// it yields then has Truncated set, unless the history below the base is
// a removed session's (see Workspace.Remove): a session committed to
// again after its removal begins at its first new step.
func (st *Step) Log(ctx context.Context, fn func(*Step) error) (err error) {
	if err := st.enter(ctx, "log"); err != nil {
		return err
	}
	if fn == nil {
		return nilArg("log "+st.String(), "function", "fn")
	}
	defer st.ws.exit()
	return st.log(ctx, fn)
}

// log is Log for a call already in flight.
func (st *Step) log(ctx context.Context, fn func(*Step) error) (err error) {
	if err := st.readable("log"); err != nil {
		return err
	}
	defer st.ws.classifyTo(&err)
	history := st.history()
	floor, err := st.ws.repo.ReadBase(ctx, history)
	if err != nil {
		return fmt.Errorf("log %s: %w", st, err)
	}
	if st.m.Number < floor {
		// Removed since st was read, or a damaged base marker.
		if _, _, err := st.ws.removedNow(ctx, history); err != nil {
			return fmt.Errorf("log %s: %w", st, err)
		}
	}
	for cur := st; cur != nil; {
		// Parents held in memory are read without a request: the walk
		// itself notices a cancelled ctx, before the next step.
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("log %s: stopped before %s: %w", st, cur, err)
		}
		if p := cur.m.Parent; p != nil && p.Number < floor {
			// A copy: cur may be st, the caller's, which other
			// goroutines may be reading or logging from too.
			last := *cur
			last.Truncated = !st.ws.removedBelow(ctx, history, floor)
			return fn(&last)
		}
		if err := fn(cur); err != nil {
			return err
		}
		next, err := cur.parentStep(ctx)
		if err != nil {
			return err
		}
		cur = next
	}
	return nil
}

// ChangeKind says how an entry differs between two states.
type ChangeKind string

// Change kinds.
const (
	Added   ChangeKind = "added"
	Removed ChangeKind = "removed"
	Changed ChangeKind = "changed"
)

// Change is one difference between two states. Path is a JSON pointer
// (RFC 6901: "" is the whole document, "/a/0" a member) for JSON states,
// or a slash-separated file path for directory states.
type Change struct {
	Path string     `json:"path"`
	Kind ChangeKind `json:"kind"`
}

// Diff lists the entries added, removed or changed from a to b. JSON
// states are compared by JSON pointer (array elements index by index),
// directory states by path. It reads only what differs: subtrees, runs
// of array elements and runs of directory entries both steps share are
// stepped over unread, so comparing a step with its parent costs what
// the step changed, whatever the state's size. Both steps must be of
// this workspace's store: a step read through a workspace of another
// store is refused, as Fork refuses it.
func (w *Workspace) Diff(ctx context.Context, a, b *Step) (_ []Change, err error) {
	if err := w.enterCtx(ctx, "diff"); err != nil {
		return nil, err
	}
	defer w.exit()
	defer w.classifyTo(&err)
	if a == nil || b == nil || a.m == nil || b.m == nil {
		return nil, invalid(errors.New("diff: two steps are needed"))
	}
	if a.kind() != b.kind() {
		return nil, invalid(fmt.Errorf("diff %s %s: a %s state and a %s state", a, b, a.kind(), b.kind()))
	}
	// Both states are read from this workspace's store: a step read
	// through a workspace of another store names objects this one does
	// not hold, or holds as another step's (I7).
	for _, st := range []*Step{a, b} {
		if err := w.checkOwnStep(ctx, st); err != nil {
			return nil, fmt.Errorf("diff %s %s: %w", a, b, err)
		}
	}
	// The workspace's view of the two layouts: a reader diffing each
	// step with the one before it reads only the objects new to it, not
	// an index of each step's whole layout (manifest/readindex.go).
	v, err := w.repo.View(ctx, a.m.Layout, b.m.Layout)
	if err != nil {
		return nil, fmt.Errorf("diff %s %s: %w", a, b, err)
	}
	r := &tree.Reader{Src: v, Limits: w.treeLimits()}
	var out []Change
	add := func(c tree.Change) error {
		out = append(out, Change{Path: c.Path, Kind: ChangeKind(c.Kind)})
		return nil
	}
	if a.kind() == KindDir {
		err = r.DiffDir(ctx, a.m.Root, b.m.Root, add)
	} else {
		err = r.DiffJSON(ctx, a.m.Root, b.m.Root, add)
	}
	if err != nil {
		// Which two steps: a replay diffs many.
		return nil, fmt.Errorf("diff %s %s: %w", a, b, err)
	}
	return out, nil
}
