package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/cachedir"
	"github.com/cairnlog/cairn/internal/realpath"
	"github.com/cairnlog/cairn/internal/targetdir"
)

// A work directory given with --dir (Config.Dir) outlives a run killed
// before it emptied it: SIGKILL, a restarted machine or container whose
// volume is kept. The next run of the same session takes it over rather
// than refusing it for not being empty, and loses nothing the command
// wrote there:
//
//   - if the directory holds the state of a step of the session (the
//     one the earlier run wrote there or last committed from it, however
//     far below the head; the head; one of matchDepth steps below it),
//     every byte of it is in the store, and the run resumes from the head;
//   - if it holds something else, written by the command of an earlier
//     run of the session (its run record says so), and the session's head
//     is still the step that directory was last written from or
//     committed as, it is committed as the next step, which the run then
//     resumes from;
//   - if the session moved elsewhere meanwhile (another worker), the run
//     refuses, naming what to do: the work is neither committed over the
//     other worker's steps nor thrown away;
//   - a directory no run of the session left is refused, as before.
//
// The run record is kept outside the directory (a file in it would be
// committed with a directory state), beside the local caches: which
// store and session the directory holds, the step it was last written
// from or committed as, and whether a command may have written to it
// since. `cairn commit --dir D` (or --json-file D/state.json) moves the
// record's step on, so that a command's own commits are not taken for the
// session moving elsewhere; before it starts it names itself in the
// record as under way (BeginCommit), so that a commit killed after its
// step landed and before it moved the record on is still known for the
// command's own (its writer and time), and the work written since goes
// on top of it. Without the record (caches turned off, or
// lost with a container), only a directory that holds a stored step is
// taken over. What a command leaves uncommitted when it exits is the step
// in flight, redone from the head after a restart as it always was: the
// record says so as soon as the command has exited.
//
// While a run owns its directory it holds a lock on it (flock(2) on the
// directory itself), so a second run given the same directory refuses it
// rather than sharing it.

// recordVersion is the version of a run record's format. Version 2
// added Pending; a version 1 record reads as one with none.
const recordVersion = 2

// maxPending bounds the commits a record names as under way.
const maxPending = 8

// matchDepth is how many steps back from the head a left-over work
// directory is compared with.
const matchDepth = 64

// dirRecord is a run record: what a work directory holds.
type dirRecord struct {
	Version int    `json:"version"`
	Store   string `json:"store"`
	Dir     string `json:"dir"`
	Session string `json:"session"`
	// Step is the step the directory was last written from or committed
	// as (0: none, a new session), ID that step's id.
	Step uint64 `json:"step"`
	ID   string `json:"id"`
	// Command says a command may have written to the directory since.
	Command bool `json:"command"`
	// Pending names the commits from the directory (cairn commit --dir,
	// --json-file D/state.json) that began and have not yet noted their
	// step (NoteCommit): a process killed after its step landed and
	// before it noted it leaves its entry, by which a later run knows
	// that step for the directory's own, not another worker's.
	Pending []pendingCommit `json:"pending,omitempty"`
}

// pendingCommit is a commit from a work directory under way: the
// process's name as its step's Writer will say it, and when it began.
type pendingCommit struct {
	Writer string    `json:"writer"`
	Since  time.Time `json:"since"`
}

// recordKey returns the name dir's run record is kept under: dir
// absolute, with its symlinks resolved (realpath.Resolve), so that one
// directory reached by two paths (a symlink, a bind of the same tree)
// has one record, and a symlink pointed elsewhere does not lend its
// record to another directory.
func recordKey(dir string) string {
	if real, err := realpath.Resolve(dir); err == nil {
		return real
	}
	return dir
}

// recordPath returns the file of dir's run record under cacheDir ("" for
// none), dir being as recordKey returns it.
func recordPath(cacheDir, dir string) string {
	if cacheDir == "" {
		return ""
	}
	return filepath.Join(cacheDir, "runs", cachedir.Name("cairn run\x00"+dir, ".run"))
}

// loadRecord reads dir's run record; false if there is none usable.
func loadRecord(path, dir string) (dirRecord, bool) {
	var r dirRecord
	if path == "" {
		return r, false
	}
	data, err := cachedir.Read(path, 1<<16)
	if err != nil || json.Unmarshal(data, &r) != nil || r.Version < 1 || r.Version > recordVersion || r.Dir != dir {
		return dirRecord{}, false
	}
	if len(r.Pending) > maxPending {
		r.Pending = r.Pending[len(r.Pending)-maxPending:]
	}
	return r, true
}

func saveRecord(path string, r dirRecord) error {
	if path == "" {
		return nil
	}
	if r.Version == 0 {
		// A record read back is written in its own version: one that
		// an older cairn run left stays one it reads (which ignores
		// Pending).
		r.Version = recordVersion
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := writeRecord(path, data); err != nil {
		return fmt.Errorf("keep the run record of the work directory: %w", err)
	}
	return nil
}

// writeRecord and removeRecord write and remove a run record's file
// (tests make them fail).
var (
	writeRecord  = cachedir.WriteFile
	removeRecord = cachedir.Remove
)

// NoteCommit tells the run record of a work directory that the state at
// path (a directory, or a JSON file in one) was committed as step of
// session on store, so that a run taking the directory over later knows
// the command's own commits from another worker's. A path that is no
// work directory's, or whose record is for another store or session,
// changes nothing. Best effort: without the note, a later run refuses
// rather than commits.
func NoteCommit(cacheDir, store, path string, step *cairn.Step) {
	rp, r, ok := recordOf(cacheDir, store, path, step.Session)
	if !ok {
		return
	}
	r.Step, r.ID = step.Number, step.ID.String()
	r.Pending = slices.DeleteFunc(r.Pending, func(p pendingCommit) bool { return p.Writer == cairn.ProcessWriter() })
	_ = saveRecord(rp, r)
}

// BeginCommit tells the run record of a work directory that this
// process is about to commit the state at path (a directory, or a JSON
// file in one) to session on store: NoteCommit's intent, kept before the
// step can land. A run killed after the step landed and before
// NoteCommit could note it knows the step for its directory's own by the
// writer and time the intent names, and carries on from it rather than
// taking it for another worker's. A path that is no work directory's
// changes nothing. Best effort, as NoteCommit.
func BeginCommit(cacheDir, store, path, session string) {
	rp, r, ok := recordOf(cacheDir, store, path, session)
	if !ok {
		return
	}
	me := cairn.ProcessWriter()
	r.Pending = slices.DeleteFunc(r.Pending, func(p pendingCommit) bool { return p.Writer == me })
	r.Pending = append(r.Pending, pendingCommit{Writer: me, Since: time.Now().UTC()})
	if len(r.Pending) > maxPending {
		r.Pending = r.Pending[len(r.Pending)-maxPending:]
	}
	_ = saveRecord(rp, r)
}

// recordOf returns the run record of the work directory holding the
// state at path (the directory, or its state.json), and its file, if
// there is one for store and session.
func recordOf(cacheDir, store, path, session string) (string, dirRecord, bool) {
	// Where the kernel takes the path (realpath.Resolve), as cairn run
	// keys its record: D/.. after a link is not the text cleaned.
	dir, err := realpath.Resolve(path)
	if err != nil {
		return "", dirRecord{}, false
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		if filepath.Base(dir) != stateFile {
			return "", dirRecord{}, false
		}
		dir = filepath.Dir(dir)
	}
	rp := recordPath(cacheDir, dir)
	r, ok := loadRecord(rp, dir)
	if !ok || r.Store != store || r.Session != session {
		return "", dirRecord{}, false
	}
	return rp, r, true
}

// stateFile is the file a JSON state is written to in the work directory.
const stateFile = "state.json"

// DirError says why a run does not take over its non-empty work
// directory. It matches cairn.ErrConflict when another run holds the
// directory or the session moved elsewhere since the directory was
// written (the work in it is not lost: it stays there), and
// cairn.ErrInvalid when no run of the session left the directory.
type DirError struct {
	Dir    string // the work directory, absolute
	Reason string // why, in words that follow the directory's name
	// Conflict: another worker holds the directory or moved the session.
	Conflict bool
}

func (e *DirError) Error() string { return fmt.Sprintf("work directory %s %s", e.Dir, e.Reason) }

// Is makes a DirError match cairn.ErrConflict or cairn.ErrInvalid.
func (e *DirError) Is(target error) bool {
	if e.Conflict {
		return target == cairn.ErrConflict
	}
	return target == cairn.ErrInvalid
}

// workDir is a work directory given with Config.Dir, owned by this run.
type workDir struct {
	path   string // absolute
	key    string // the name its record is kept under (recordKey)
	record string // its run record's file, "" if none is kept
	rec    dirRecord
	unlock func()
	warned bool // note said it cannot keep the record
}

// openWorkDir makes dir if absent and locks it for this run. A
// filesystem that cannot lock it (flock on an NFS mount needs write access
// to the directory's descriptor, which a directory never gives) leaves it
// unlocked, as before there was a lock, and the run says so on log.
func openWorkDir(dir, cacheDir, store, session string, log io.Writer) (*workDir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("make work directory: %w", err)
	}
	unlock, err := targetdir.Lock(dir)
	if errors.Is(err, targetdir.ErrLocked) {
		return nil, &DirError{Dir: dir, Reason: "is in use by another cairn run on this machine", Conflict: true}
	}
	if err != nil {
		fmt.Fprintf(log, "cairn run: cannot lock %s (%v): another run given it would not be kept out\n", dir, err)
		unlock = func() {}
	}
	key := recordKey(dir)
	return &workDir{
		path: dir, key: key, record: recordPath(cacheDir, key), unlock: unlock,
		rec: dirRecord{Store: store, Dir: key, Session: session},
	}, nil
}

// note records that the directory holds head's state (nil: empty, a new
// session) and whether the command may write to it from now on; nothing
// for a nil w (a temporary directory). A record that cannot be kept is
// removed, and the run says so on log once: a stale one could let a later
// run take the command's work for leftovers of cairn run's own. If it
// can be neither kept nor removed when the command is about to write,
// note returns why, and the command must not start: the stale record
// may say the directory holds only what cairn run wrote, and a run
// killed then would lose the command's work to the next run, which
// writes the directory again.
func (w *workDir) note(head *cairn.Step, command bool, log io.Writer) error {
	if w == nil {
		return nil
	}
	// Whatever was under way landed below head or not at all.
	w.rec.Step, w.rec.ID, w.rec.Command, w.rec.Pending = 0, "", command, nil
	if head != nil {
		w.rec.Step, w.rec.ID = head.Number, head.ID.String()
	}
	if err := saveRecord(w.record, w.rec); err != nil {
		if rerr := removeRecord(w.record); rerr != nil && command {
			return fmt.Errorf("%v, and cannot remove the earlier one, which may say %s holds nothing of the command's (make the cache directory writable, or set CAIRN_CACHE_DIR=off)", err, w.path)
		}
		if !w.warned {
			fmt.Fprintf(log, "cairn run: %v; a run killed now leaves %s to be emptied by hand unless it holds a stored step\n", err, w.path)
			w.warned = true
		}
	}
	return nil
}

// close empties the directory, drops its record and unlocks it: every
// step is in the store.
func (w *workDir) close() {
	w.rec.Command = false
	if saveRecord(w.record, w.rec) == nil && emptyDir(w.path) == nil && w.record != "" {
		_ = removeRecord(w.record)
	}
	w.unlock()
}

// takeOver decides what to do with what the directory holds at the start
// of the run (see the comment at the top of this file): nothing, if it
// is empty or holds a stored step or only what an earlier run wrote
// there itself; a commit of the earlier command's work; or a refusal.
func (w *workDir) takeOver(ctx context.Context, sess *cairn.Session, log io.Writer) error {
	des, err := os.ReadDir(w.path)
	if err != nil {
		return fmt.Errorf("read work directory: %w", err)
	}
	if len(des) == 0 {
		return nil
	}
	name := sess.Name()
	prev, known := loadRecord(w.record, w.key)
	if known && (prev.Store != w.rec.Store || prev.Session != name) {
		return &DirError{Dir: w.path, Reason: fmt.Sprintf(
			"is not empty: it holds what a cairn run of session %s on store %s left there (run that session there, or empty the directory)",
			prev.Session, prev.Store)}
	}
	if known && !prev.Command {
		fmt.Fprintf(log, "cairn run: %s holds what an earlier run of %s was writing or emptying; it is written again\n", w.path, name)
		return nil
	}
	head, err := headOf(ctx, sess, true)
	if err != nil {
		return err
	}
	kind := cairn.KindDir
	if head != nil {
		kind = head.Kind
	} else if len(des) == 1 && des[0].Name() == stateFile && des[0].Type().IsRegular() {
		kind = cairn.KindJSON
	}
	state, extra, err := w.state(kind, des)
	if err != nil {
		return err
	}
	var id cairn.StateID
	var notState error // why what the directory holds is no state
	if state != nil {
		if id, notState = cairn.StateIDOf(state); notState != nil {
			state = nil // not a state a step could hold (a document cut short): no step matches it
		}
	}
	if head != nil && state != nil {
		match, err := stepHolding(ctx, sess, head, id, prev, known)
		if err != nil {
			return err
		}
		if match != nil {
			if extra > 0 {
				fmt.Fprintf(log, "cairn run: %s: %d %s beside %s dropped (a JSON session's step holds %s alone)\n",
					w.path, extra, plural(extra, "file"), stateFile, stateFile)
			}
			fmt.Fprintf(log, "cairn run: %s holds the state of %s, which is stored; resuming from %s\n", w.path, match, head)
			return nil
		}
	}
	if !known {
		return &DirError{Dir: w.path, Reason: fmt.Sprintf(
			"is not empty and holds no recent step of %s, and no cairn run of %s on this machine left it (give an empty or new directory, or empty this one)",
			name, name)}
	}
	if head != nil && head.Number > prev.Step && len(prev.Pending) > 0 {
		own, err := ownSteps(ctx, sess, head, prev)
		if err != nil {
			return err
		}
		if own {
			// The killed run's command committed them from the
			// directory and was killed before it noted them: its work
			// since goes on top of them, as it would have.
			fmt.Fprintf(log, "cairn run: %s was committed from %s by the interrupted run's command, which was killed before it could note it; what the directory holds since goes on top of it\n",
				stepsFrom(name, prev.Step+1, head.Number), w.path)
			prev.Step, prev.ID = head.Number, head.ID.String()
		}
	}
	if number(head) != prev.Step || (head != nil && head.ID.String() != prev.ID) {
		return w.moved(ctx, sess, kind, prev, head)
	}
	if state == nil {
		return &DirError{Dir: w.path, Reason: fmt.Sprintf(
			"holds work an interrupted run of %s did not commit, which cannot be committed as %s's next step: %s (commit what is worth keeping yourself, then empty the directory)",
			name, name, w.why(kind, des, notState))}
	}
	if extra > 0 {
		fmt.Fprintf(log, "cairn run: %s: %d %s beside %s dropped (a JSON session's step holds %s alone)\n",
			w.path, extra, plural(extra, "file"), stateFile, stateFile)
	}
	st, err := sess.Commit(ctx, state, cairn.CommitOptions{
		Expect: cairn.ExpectHead(prev.Step),
		Record: json.RawMessage(`{"recovered":"work an interrupted cairn run left uncommitted in its work directory"}`),
	})
	if errors.Is(err, cairn.ErrConflict) {
		if now, herr := headOf(ctx, sess, true); herr == nil && number(now) != prev.Step {
			return w.moved(ctx, sess, kind, prev, now)
		}
	}
	if err != nil {
		return fmt.Errorf("commit the work an interrupted run left in %s: %w", w.path, err)
	}
	fmt.Fprintf(log, "cairn run: %s held work an interrupted run of %s did not commit; committed it as %s\n", w.path, name, st)
	return nil
}

// moved refuses the directory of an interrupted run whose session moved
// past the step the directory was written from, saying what it saw: the
// first step above that one, who wrote it and when, and whether a commit
// from the directory was under way when the run was interrupted.
func (w *workDir) moved(ctx context.Context, sess *cairn.Session, kind cairn.Kind, prev dirRecord, head *cairn.Step) error {
	name := sess.Name()
	from := fmt.Sprintf("%s@%d", name, prev.Step)
	if prev.Step == 0 {
		from = "no step (a new session)"
	}
	commit := fmt.Sprintf("cairn commit %s --dir %s --expect %d", name, w.path, number(head))
	if kind == cairn.KindJSON {
		commit = fmt.Sprintf("cairn commit %s --json-file %s --expect %d", name, filepath.Join(w.path, stateFile), number(head))
	}
	var saw string
	switch {
	case head == nil:
		saw = fmt.Sprintf("the session has no step now (it was removed), so the work cannot go on top of %s", from)
	case head.Number <= prev.Step:
		saw = fmt.Sprintf("the session's head is now %s, not the %s it was made from (the session was removed and written again?)", head, from)
	default:
		saw = fmt.Sprintf("the session has moved to %s since", head)
		if next, err := sess.Step(ctx, prev.Step+1); err == nil {
			saw += fmt.Sprintf(": %s was written by %s at %s", next, next.Writer, next.Time.UTC().Format(time.RFC3339))
			if head.Number > next.Number {
				saw += fmt.Sprintf(" (and %d more after it)", head.Number-next.Number)
			}
		}
		switch {
		case len(prev.Pending) > 0:
			saw += fmt.Sprintf(", not by the commit from this directory that was under way when the run was interrupted (%s): another worker, or another program, committed to the session", writers(prev.Pending))
		default:
			saw += ", and no commit from this directory was under way: another worker, or a program committing otherwise than from this directory, committed to the session"
		}
	}
	return &DirError{Conflict: true, Dir: w.path, Reason: fmt.Sprintf(
		"holds work an interrupted run of %s did not commit, made from %s; %s. "+
			"Look at what it committed (cairn log %s), then: to keep this directory's work on top of it, %s; else move the work elsewhere and empty the directory; then run again",
		name, from, saw, name, commit)}
}

// writers names the processes of pending commits.
func writers(ps []pendingCommit) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Writer
	}
	return strings.Join(names, ", ")
}

// stepsFrom names steps a..b of a session: "s@3", or "s@3 to s@5".
func stepsFrom(name string, a, b uint64) string {
	if a == b {
		return fmt.Sprintf("%s@%d", name, a)
	}
	return fmt.Sprintf("%s@%d to %s@%d", name, a, name, b)
}

// ownSteps reports whether every step above the record's step, up to
// head, is one a commit from the directory wrote while it was under way
// (prev.Pending): each the child of the one before, the first the
// record's step itself, written by a pending commit's process (each
// commit lands at most one step) no earlier than that commit began. A
// step anything else wrote (another worker, the HTTP API) makes it
// false.
func ownSteps(ctx context.Context, sess *cairn.Session, head *cairn.Step, prev dirRecord) (bool, error) {
	if head.Number-prev.Step > uint64(len(prev.Pending)) {
		return false, nil
	}
	pending := slices.Clone(prev.Pending)
	parentID := prev.ID
	for n := prev.Step + 1; n <= head.Number; n++ {
		st := head
		if n < head.Number {
			var err error
			if st, err = sess.Step(ctx, n); errors.Is(err, cairn.ErrNotFound) {
				return false, nil
			} else if err != nil {
				return false, err
			}
		}
		if n > 1 || prev.Step > 0 {
			if st.Parent == nil || st.Parent.Session != sess.Name() || st.Parent.Number != n-1 || st.Parent.ID != parentID {
				return false, nil
			}
		} else if st.Parent != nil || st.Origin != nil {
			return false, nil
		}
		i := slices.IndexFunc(pending, func(p pendingCommit) bool {
			// Time is the writer's clock, the same machine's: a second's
			// slack for its rounding.
			return p.Writer == st.Writer && !st.Time.Before(p.Since.Add(-time.Second))
		})
		if i < 0 {
			return false, nil
		}
		pending = slices.Delete(pending, i, i+1)
		parentID = st.ID.String()
	}
	return true, nil
}

// state returns what the directory holds as a state of kind: the
// directory, or for a JSON state its state.json, with the number of other
// entries beside it (nil if there is none).
func (w *workDir) state(kind cairn.Kind, des []os.DirEntry) (cairn.State, int, error) {
	if kind != cairn.KindJSON {
		return cairn.Dir(w.path), 0, nil
	}
	extra := 0
	found := false
	for _, de := range des {
		if de.Name() == stateFile && de.Type().IsRegular() {
			found = true
		} else {
			extra++
		}
	}
	if !found {
		return nil, extra, nil
	}
	doc, err := os.ReadFile(filepath.Join(w.path, stateFile))
	if err != nil {
		return nil, 0, fmt.Errorf("read work directory: %w", err)
	}
	return cairn.JSON(doc), extra, nil
}

// why says why the directory is no state of kind: building it failed
// with err (nil if there was nothing to build).
func (w *workDir) why(kind cairn.Kind, des []os.DirEntry, err error) string {
	if kind != cairn.KindJSON {
		return err.Error()
	}
	for _, de := range des {
		if de.Name() == stateFile {
			return stateFile + " is not a JSON document"
		}
	}
	return "it has no " + stateFile
}

// stepHolding returns a step of the session whose state is id, nil if
// none is found: the head; the step the run record says the directory
// was written from or committed as (read by its number, however far
// below the head: a command that commits through the HTTP API may have
// gone on for hundreds of steps without touching the directory); else the
// steps below the head, at most matchDepth of them, and none below the
// record's step.
func stepHolding(ctx context.Context, sess *cairn.Session, head *cairn.Step, id cairn.StateID, prev dirRecord, known bool) (*cairn.Step, error) {
	if head.StateID() == id {
		return head, nil
	}
	if known && prev.Step > 0 && prev.Step < head.Number {
		st, err := sess.Step(ctx, prev.Step)
		switch {
		case err == nil && st.ID.String() == prev.ID && st.StateID() == id:
			return st, nil
		case err != nil && !errors.Is(err, cairn.ErrNotFound):
			return nil, err // a step pruned since is no match; a store out of reach is an error
		}
	}
	var match *cairn.Step
	n := 0
	stop := errors.New("stop")
	err := head.Log(ctx, func(st *cairn.Step) error {
		if st.StateID() == id {
			match = st
			return stop
		}
		n++
		if n >= matchDepth || (known && st.Session == head.Session && st.Number <= prev.Step) {
			return stop
		}
		return nil
	})
	if err != nil && err != stop && !errors.Is(err, cairn.ErrNotFound) {
		return nil, err // history pruned below the head is no match; a store out of reach is an error
	}
	return match, nil
}
