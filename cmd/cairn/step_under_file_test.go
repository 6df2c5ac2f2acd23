package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStepReadUnderAFile: a file where the directory of a session's
// steps belongs (or where the directory of every session's steps does)
// is said, by every command that reads one step through it (show, fork,
// checkout and diff of a step, and a fork's history read from the
// session it was forked from), in the words log and verify say it: the
// store's damage, exit 1, never a step the store has lost. Before, a
// read of one step beneath the file was "not found", and show, fork,
// checkout and diff said "step a@1: not found: the store has lost it",
// and log of a fork "session a, step 1 is missing".
func TestStepReadUnderAFile(t *testing.T) {
	store := t.TempDir()
	for _, c := range [][]string{{`{"n":1}`, "commit", "a", "-"}, {`{"n":2}`, "commit", "a", "-"}, {"", "fork", "a@2", "s"}, {`{"n":3}`, "commit", "s", "-"}} {
		if _, errs, code := cli(t, store, c[0], c[1:]...); code != 0 {
			t.Fatalf("%s: exit %d, %s", strings.Join(c[1:], " "), code, errs)
		}
	}
	check := func(said string, reads [][]string) {
		t.Helper()
		for _, args := range reads {
			out, errs, code := cli(t, store, "", args...)
			if code != 1 || !strings.Contains(errs, said) || strings.Contains(errs, "lost") || strings.Contains(errs, "missing") || storeWords.MatchString(errs) {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1, %q", strings.Join(args, " "), code, out, errs, said)
			}
		}
	}
	aDir := filepath.Join(store, "steps", "a")
	if err := os.Rename(aDir, aDir+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(aDir, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("the store "+store+" holds a file where a directory holding the steps of session a belongs: remove it to repair", [][]string{
		{"show", "a@1"}, {"show", "a@2"}, {"show", "a@9"}, {"fork", "a@1", "t"},
		{"checkout", "a@1", "--dir", filepath.Join(t.TempDir(), "co")}, {"diff", "a@1", "a@2"},
		{"show", "s@1"}, {"fork", "s@1", "t"}, {"log", "s"}, {"log", "a"},
	})
	out, errs, code := cli(t, store, "", "verify")
	if want := "BAD the steps of session a cannot be listed (the store holds a file where their directory belongs)"; code != 1 || !strings.Contains(out, want) {
		t.Errorf("verify: exit %d, %q %q; want exit 1, %q", code, out, errs, want)
	}

	// The directory of every session's steps a file.
	if err := os.Remove(aDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(aDir+".away", aDir); err != nil {
		t.Fatal(err)
	}
	steps := filepath.Join(store, "steps")
	if err := os.Rename(steps, steps+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(steps, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	check("the store "+store+" holds a file where a directory holding the steps of ", [][]string{
		{"show", "s@3"}, {"show", "s@1"}, {"fork", "s@3", "t"}, {"fork", "a@1", "t"}, {"diff", "a@1", "s@3"}, {"log", "s"},
	})

	// Removing the file repairs the store; no fork was made meanwhile.
	if err := os.Remove(steps); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(steps+".away", steps); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := cli(t, store, "", "show", "s@1"); code != 0 || strings.TrimSpace(out) != `{"n":1}` {
		t.Errorf("show s@1 after the repair: exit %d, %q %q", code, out, errs)
	}
	if _, errs, code := cli(t, store, "", "show", "t"); code != 1 {
		t.Errorf("show t: exit %d, %q; want no session t", code, errs)
	}
	if out, errs, code := cli(t, store, "", "verify"); code != 0 {
		t.Errorf("verify after the repair: exit %d, %q %q", code, out, errs)
	}
}
