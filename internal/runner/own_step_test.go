package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/cachedir"
)

// sessionWithStep returns session s of a new local store under tmp, its
// first step committed from JSON state.
func sessionWithStep(t *testing.T, ctx context.Context, tmp, state string) (*cairn.Workspace, *cairn.Session, *cairn.Step) {
	t.Helper()
	ws, err := cairn.Open(ctx, filepath.Join(tmp, "store"))
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := ws.Session("s")
	head, err := sess.Commit(ctx, cairn.JSON([]byte(state)), cairn.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ws, sess, head
}

// writtenWorkDir returns dir opened as session s's work directory with
// head written into it and noted, as a run leaves it before its command
// starts.
func writtenWorkDir(t *testing.T, ctx context.Context, head *cairn.Step, dir, cache, store string) *workDir {
	t.Helper()
	w, err := openWorkDir(dir, cache, store, head.Session, t.Output())
	if err != nil {
		t.Fatal(err)
	}
	if err := materialise(ctx, head, dir); err != nil {
		t.Fatal(err)
	}
	w.note(head, true, t.Output())
	return w
}

// killedAfterLanding leaves dir as a run killed while its command
// committed the directory would when the commit (BeginCommit, then the
// step) was killed before NoteCommit, and the command then wrote more:
// the record still says head, with the commit pending.
func killedAfterLanding(t *testing.T, ctx context.Context, sess *cairn.Session, dir, cache, store string) {
	t.Helper()
	head, err := sess.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := writtenWorkDir(t, ctx, head, dir, cache, store)
	os.WriteFile(filepath.Join(dir, "a"), []byte("committed by the killed commit\n"), 0o644)
	BeginCommit(cache, store, dir, sess.Name())
	if _, err := sess.Commit(ctx, cairn.Dir(dir), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	// Killed here: no NoteCommit. The command went on writing.
	os.WriteFile(filepath.Join(dir, "b"), []byte("written after it\n"), 0o644)
	w.unlock()
}

// TestTakeOverStepOfAKilledCommit: a commit from the work directory
// killed after its step landed and before it noted it left the record
// one step behind the head. The takeover took the step for another
// worker's and refused (exit 3, "another worker?"); it now knows it by
// the commit the record names as under way, and commits the work
// written since on top of it.
func TestTakeOverStepOfAKilledCommit(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	ws, err := cairn.Open(ctx, filepath.Join(tmp, "store"))
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := ws.Session("s")
	seed := filepath.Join(tmp, "seed")
	os.Mkdir(seed, 0o755)
	os.WriteFile(filepath.Join(seed, "a"), []byte("first\n"), 0o644)
	if _, err := sess.Commit(ctx, cairn.Dir(seed), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	cache, dir := filepath.Join(tmp, "cache"), filepath.Join(tmp, "work")
	killedAfterLanding(t, ctx, sess, dir, cache, ws.URL())

	w, err := openWorkDir(dir, cache, ws.URL(), "s", t.Output())
	if err != nil {
		t.Fatal(err)
	}
	defer w.unlock()
	var log bytes.Buffer
	if err := w.takeOver(ctx, sess, &log); err != nil {
		t.Fatalf("take over after a commit killed past landing: %v", err)
	}
	if !strings.Contains(log.String(), "s@2 was committed from") || !strings.Contains(log.String(), "committed it as s@3") {
		t.Errorf("take over: %q", log.String())
	}
	head, _ := sess.Head(ctx)
	files, _ := head.Files(ctx)
	if head.Number != 3 || len(files) != 2 {
		t.Errorf("head after the takeover: %s with %v, want s@3 holding a and b", head, files)
	}
}

// TestTakeOverStepOfAnotherWriter: the record names a commit under way,
// but the step above the record's was written by another process: the
// takeover refuses, saying which step, who wrote it and which commit it
// expected, and what to do; nothing is committed.
func TestTakeOverStepOfAnotherWriter(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	ws, sess, head := sessionWithStep(t, ctx, tmp, `{"n":1}`)
	cache, dir := filepath.Join(tmp, "cache"), filepath.Join(tmp, "work")
	w := writtenWorkDir(t, ctx, head, dir, cache, ws.URL())
	// The commit under way is another process's (one that never landed).
	w.rec.Pending = []pendingCommit{{Writer: "elsewhere/1", Since: time.Now().UTC()}}
	w.rec.Step, w.rec.ID = head.Number, head.ID.String()
	if err := saveRecord(w.record, w.rec); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, stateFile), []byte(`{"n":"mine"}`), 0o644)
	w.unlock()
	// This process, not elsewhere/1, commits s@2.
	if _, err := sess.Commit(ctx, cairn.JSON([]byte(`{"n":2}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}

	w, err := openWorkDir(dir, cache, ws.URL(), "s", t.Output())
	if err != nil {
		t.Fatal(err)
	}
	defer w.unlock()
	err = w.takeOver(ctx, sess, &bytes.Buffer{})
	var de *DirError
	if !errors.As(err, &de) || !errors.Is(err, cairn.ErrConflict) {
		t.Fatalf("take over past another writer's step: %v, want a conflict", err)
	}
	for _, want := range []string{
		"has moved to s@2 since", "s@2 was written by " + cairn.ProcessWriter(), "(elsewhere/1)",
		"cairn log s", "cairn commit s --json-file " + filepath.Join(dir, stateFile) + " --expect 2",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal does not say %q:\n%v", want, err)
		}
	}
	if now, _ := sess.Head(ctx); now.Number != 2 {
		t.Errorf("the refusal committed: head %s", now)
	}
}

// TestRunRecordVersion1Reads: a record an older cairn run wrote
// (version 1, no pending commits) still reads, and a commit noting its
// step keeps it in version 1, which that run reads.
func TestRunRecordVersion1Reads(t *testing.T) {
	tmp := t.TempDir()
	cache, dir := filepath.Join(tmp, "cache"), filepath.Join(tmp, "work")
	os.Mkdir(dir, 0o755)
	key := recordKey(dir)
	rp := recordPath(cache, key)
	old := `{"version":1,"store":"file:///x","dir":` + quote(key) + `,"session":"s","step":3,"id":"abc","command":true}`
	if err := cachedir.WriteFile(rp, []byte(old)); err != nil {
		t.Fatal(err)
	}
	r, ok := loadRecord(rp, key)
	if !ok || r.Step != 3 || !r.Command || len(r.Pending) != 0 {
		t.Fatalf("version 1 record read as %+v, %v", r, ok)
	}
	BeginCommit(cache, "file:///x", dir, "s")
	data, _ := os.ReadFile(rp)
	if !bytes.Contains(data, []byte(`"version":1`)) || !bytes.Contains(data, []byte(`"pending"`)) {
		t.Errorf("version 1 record after BeginCommit: %s", data)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
