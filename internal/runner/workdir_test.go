package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestTakeOverJSONWorkDir: a JSON session's work directory left by a
// killed run holds state.json as the run wrote it (compact, whatever
// whitespace the step was committed with): it is the head's state, and
// the next run resumes without a new step. A state.json the command
// rewrote and did not commit becomes the next step, and files beside
// state.json, which a JSON step cannot hold, are said to be dropped.
func TestTakeOverJSONWorkDir(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	ws, err := cairn.Open(ctx, filepath.Join(tmp, "store"))
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := ws.Session("s")
	if _, err := sess.Commit(ctx, cairn.JSON([]byte(`{ "a": 1.50,  "b": [1, "x"] }`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	cache, dir := filepath.Join(tmp, "cache"), filepath.Join(tmp, "work")

	// killed leaves dir as a run killed while its command ran would.
	killed := func(write func()) {
		w, err := openWorkDir(dir, cache, ws.URL(), "s", t.Output())
		if err != nil {
			t.Fatal(err)
		}
		head, err := sess.Head(ctx)
		if err != nil {
			t.Fatal(err)
		}
		w.note(head, false, t.Output())
		if err := materialise(ctx, head, dir); err != nil {
			t.Fatal(err)
		}
		w.note(head, true, t.Output())
		write()
		w.unlock() // the kernel's part when the run dies
	}
	takeOver := func() string {
		t.Helper()
		w, err := openWorkDir(dir, cache, ws.URL(), "s", t.Output())
		if err != nil {
			t.Fatal(err)
		}
		defer w.unlock()
		var log bytes.Buffer
		if err := w.takeOver(ctx, sess, &log); err != nil {
			t.Fatalf("take over: %v", err)
		}
		return log.String()
	}

	killed(func() {})
	if log := takeOver(); !strings.Contains(log, "holds the state of s@1") {
		t.Errorf("a work directory holding the head's state.json: %q", log)
	}

	killed(func() {
		os.WriteFile(filepath.Join(dir, "state.json"), []byte(`{"a":2}`), 0o644)
		os.WriteFile(filepath.Join(dir, "scratch.log"), []byte("x"), 0o644)
	})
	log := takeOver()
	if !strings.Contains(log, "committed it as s@2") || !strings.Contains(log, "1 file beside state.json dropped") {
		t.Errorf("a work directory holding a new state.json and a scratch file: %q", log)
	}
	head, err := sess.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if doc, _ := head.JSON(ctx); head.Number != 2 || string(doc) != `{"a":2}` {
		t.Errorf("head after the takeover: %s %s, want s@2 {\"a\":2}", head, doc)
	}

	// Killed while cairn run itself was writing the directory (before
	// the command started): nothing of the command's is there.
	w, err := openWorkDir(dir, cache, ws.URL(), "s", t.Output())
	if err != nil {
		t.Fatal(err)
	}
	w.note(head, false, t.Output())
	os.WriteFile(filepath.Join(dir, "state.json"), []byte(`{"a":`), 0o644)
	w.unlock()
	if log := takeOver(); !strings.Contains(log, "it is written again") {
		t.Errorf("a work directory cairn run was writing: %q", log)
	}

	// Cut short mid-write, state.json is no JSON step: refused, kept.
	killed(func() { os.WriteFile(filepath.Join(dir, "state.json"), []byte(`{"a":`), 0o644) })
	w, err = openWorkDir(dir, cache, ws.URL(), "s", t.Output())
	if err != nil {
		t.Fatal(err)
	}
	defer w.unlock()
	var de *DirError
	if err := w.takeOver(ctx, sess, &bytes.Buffer{}); !errors.As(err, &de) || !strings.Contains(err.Error(), "state.json is not a JSON document") {
		t.Errorf("a work directory holding a torn state.json: %v", err)
	}
	if doc, _ := os.ReadFile(filepath.Join(dir, "state.json")); string(doc) != `{"a":` {
		t.Errorf("the refused state.json became %q", doc)
	}
}

// TestTakeOverAfterManyAPISteps: a command that commits through the HTTP
// API leaves the work directory as the run wrote it, however many steps
// it commits. Killed after more steps than a takeover compares one by
// one, its directory still holds the step the run wrote there, which is
// stored: the next run resumes, where it refused it as the work of a
// session that moved elsewhere (exit 3, for ever).
func TestTakeOverAfterManyAPISteps(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	ws, sess, head := sessionWithStep(t, ctx, tmp, `{"turn":0}`)
	cache, dir := filepath.Join(tmp, "cache"), filepath.Join(tmp, "work")
	w := writtenWorkDir(t, ctx, head, dir, cache, ws.URL())
	for i := 1; i <= 2*matchDepth; i++ {
		if _, err := sess.Commit(ctx, cairn.JSON(fmt.Appendf(nil, `{"turn":%d}`, i)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w.unlock() // killed

	w, err := openWorkDir(dir, cache, ws.URL(), "s", t.Output())
	if err != nil {
		t.Fatal(err)
	}
	defer w.unlock()
	var log bytes.Buffer
	if err := w.takeOver(ctx, sess, &log); err != nil {
		t.Fatalf("take over after %d steps through the API: %v", 2*matchDepth, err)
	}
	if !strings.Contains(log.String(), "holds the state of s@1") {
		t.Errorf("take over: %q", log.String())
	}
}

// TestTakeOverWorkDirThroughASymlink: a run's record belongs to the
// directory, not to the path it was given by. A run given a symlink
// (work -> d1) killed while its command wrote there, then the symlink
// pointed at another directory holding the user's own files: the next
// run through the symlink took that other directory for the command's
// work and committed it as the session's next step. The work the
// killed run left in d1 is taken over through d1's own path.
func TestTakeOverWorkDirThroughASymlink(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	ws, err := cairn.Open(ctx, filepath.Join(tmp, "store"))
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := ws.Session("s")
	head, err := sess.Commit(ctx, cairn.JSON([]byte(`{"turn":1}`)), cairn.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(tmp, "cache")
	d1, d2, link := filepath.Join(tmp, "d1"), filepath.Join(tmp, "d2"), filepath.Join(tmp, "work")
	for _, d := range []string{d1, d2} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(d1, link); err != nil {
		t.Fatal(err)
	}
	w, err := openWorkDir(link, cache, ws.URL(), "s", t.Output())
	if err != nil {
		t.Fatal(err)
	}
	w.note(head, false, t.Output())
	if err := materialise(ctx, head, link); err != nil {
		t.Fatal(err)
	}
	w.note(head, true, t.Output())
	os.WriteFile(filepath.Join(link, "state.json"), []byte(`{"turn":2}`), 0o644)
	w.unlock() // killed

	// The symlink now names another directory, holding the user's files.
	os.Remove(link)
	if err := os.Symlink(d2, link); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(d2, "state.json"), []byte(`{"mine":true}`), 0o644)
	w, err = openWorkDir(link, cache, ws.URL(), "s", t.Output())
	if err != nil {
		t.Fatal(err)
	}
	var de *DirError
	if err := w.takeOver(ctx, sess, &bytes.Buffer{}); !errors.As(err, &de) {
		t.Errorf("take over of another directory through the symlink: %v, want a refusal", err)
	}
	w.unlock()
	if now, _ := sess.Head(ctx); now.Number != 1 {
		doc, _ := now.JSON(ctx)
		t.Fatalf("the other directory was committed as %s: %s", now, doc)
	}

	// d1, by its own path, holds the killed run's work: committed.
	w, err = openWorkDir(d1, cache, ws.URL(), "s", t.Output())
	if err != nil {
		t.Fatal(err)
	}
	defer w.unlock()
	var log bytes.Buffer
	if err := w.takeOver(ctx, sess, &log); err != nil {
		t.Fatalf("take over of d1 by its own path: %v", err)
	}
	now, _ := sess.Head(ctx)
	if doc, _ := now.JSON(ctx); now.Number != 2 || string(doc) != `{"turn":2}` {
		t.Errorf("head after taking over d1: %s %s, want s@2 {\"turn\":2}", now, doc)
	}
}

// TestRunStaleRecordKeepsTheCommandOut: a cache directory that turns
// read-only under a run (a remount, a full quota refusing the
// temporary file but keeping the old one) leaves the record saying the
// directory holds only what cairn run wrote there. The command started
// anyway, and a run killed while it wrote had its work written over by
// the next run. Now the command does not start, and the run says why.
func TestRunStaleRecordKeepsTheCommandOut(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	ws, err := cairn.Open(ctx, filepath.Join(tmp, "store"))
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := ws.Session("s")
	if _, err := sess.Commit(ctx, cairn.JSON([]byte(`{"n":1}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	failing := errors.New("read-only file system")
	write, remove := writeRecord, removeRecord
	t.Cleanup(func() { writeRecord, removeRecord = write, remove })
	writeRecord = func(path string, data []byte) error {
		if bytes.Contains(data, []byte(`"command":true`)) {
			return failing
		}
		return write(path, data)
	}
	removeRecord = func(string) error { return failing }

	ran := filepath.Join(tmp, "ran")
	_, err = Run(ctx, ws, Config{
		Session: "s", Dir: filepath.Join(tmp, "work"), CacheDir: filepath.Join(tmp, "cache"),
		Command: []string{"sh", "-c", `touch "$1"`, "sh", ran}, Log: t.Output(),
	})
	if err == nil || !strings.Contains(err.Error(), "cannot remove the earlier one") {
		t.Errorf("run with a record it can neither keep nor remove: %v", err)
	}
	if _, serr := os.Stat(ran); !os.IsNotExist(serr) {
		t.Errorf("the command started beside a stale record (stat: %v)", serr)
	}
}
