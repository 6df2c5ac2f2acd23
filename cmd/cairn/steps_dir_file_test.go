package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStepsDirectoryIsAFile: a file where the directory of a session's
// steps belongs (or where the directory of every session's steps does)
// is the store's damage, said in words, exit 1, by every command that
// reads through it, as a directory where a step belongs is said. Before,
// log said the session "has no steps", sessions, du and verify passed it
// over (verify: 0 problems), and gc, which saw no step of the session,
// deleted the steps of the removed session it was forked from, which its
// history still used: restoring the directory from a backup then left a
// session that could not be read.
func TestStepsDirectoryIsAFile(t *testing.T) {
	store := t.TempDir()
	for _, doc := range []string{`{"n":1}`, `{"n":2}`} {
		if _, errs, code := cli(t, store, doc, "commit", "a", "-"); code != 0 {
			t.Fatal(errs)
		}
	}
	if _, errs, code := cli(t, store, "", "fork", "a@2", "s"); code != 0 {
		t.Fatal(errs)
	}
	if _, errs, code := cli(t, store, `{"n":3}`, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	if _, errs, code := cli(t, store, "", "rm", "a"); code != 0 {
		t.Fatal(errs)
	}
	// a@1 and a@2 are s's history now, old enough for gc to delete the
	// moment nothing live names them.
	old := time.Now().Add(-2 * time.Hour)
	aSteps, _ := filepath.Glob(filepath.Join(store, "steps", "a", "0*"))
	for _, f := range aSteps {
		if err := os.Chtimes(f, old, old); err != nil {
			t.Fatal(err)
		}
	}
	sDir := filepath.Join(store, "steps", "s")
	if err := os.RemoveAll(sDir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sDir, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	said := "the store " + store + " holds a file where a directory holding the steps of session s belongs: remove it to repair"
	for _, args := range [][]string{
		{"log", "s"}, {"show", "s"}, {"sessions"}, {"du"}, {"export", "--format", "openai-jsonl"},
		{"gc", "--grace", "0s"}, {"gc", "--grace", "0s"},
	} {
		if out, errs, code := cli(t, store, "", args...); code != 1 || !strings.Contains(errs, said) || storeWords.MatchString(errs) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1, %q", strings.Join(args, " "), code, out, errs, said)
		}
	}
	if _, errs, code := cli(t, store, `{"n":4}`, "commit", "s", "-"); code != 1 || !strings.Contains(errs, said+"; the step was not written") {
		t.Errorf("commit s: exit %d, %q", code, errs)
	}
	out, errs, code := cli(t, store, "", "verify")
	if want := "BAD the steps of session s cannot be listed (the store holds a file where their directory belongs)"; code != 1 || !strings.Contains(out, want) {
		t.Errorf("verify: exit %d, %q %q; want exit 1, %q", code, out, errs, want)
	}
	for _, f := range aSteps {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("gc deleted a step the damaged session's history uses: %v", err)
		}
	}

	// The directory of every session's steps a file: every reader says so.
	steps := filepath.Join(store, "steps")
	if err := os.Rename(steps, steps+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(steps, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	every := "holds a file where a directory holding the steps of "
	for _, args := range [][]string{{"log", "s"}, {"sessions"}, {"du"}, {"verify"}, {"gc", "--grace", "0s"}} {
		if out, errs, code := cli(t, store, "", args...); code != 1 || !strings.Contains(errs, every) || storeWords.MatchString(errs) {
			t.Errorf("steps a file: %s: exit %d, stdout %q, stderr %q; want exit 1, %q", strings.Join(args, " "), code, out, errs, every)
		}
	}
	if err := os.Remove(steps); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(steps+".away", steps); err != nil {
		t.Fatal(err)
	}
	// Removing the file repairs the store (the directory comes back
	// with the next commit's step).
	if err := os.Remove(sDir); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := cli(t, store, "", "gc", "--grace", "0s"); code != 0 {
		t.Errorf("gc after the repair: exit %d, %q %q", code, out, errs)
	}
}
