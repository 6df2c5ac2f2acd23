package main

import (
	"strings"
	"testing"
)

// commitSteps commits n small JSON documents to session s.
func commitSteps(t *testing.T, store, s string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, errs, code := cli(t, store, `{"i":1}`, "commit", s, "-"); code != 0 {
			t.Fatalf("commit %s: exit %d: %s", s, code, errs)
		}
	}
}

// noStoreKeys fails if a message names a store key.
func noStoreKeys(t *testing.T, what, msg string) {
	t.Helper()
	if strings.Contains(msg, "steps/") || strings.Contains(msg, "0000000") {
		t.Errorf("%s: %q names a store key", what, msg)
	}
}

// cairn commit --expect 1 on a session with no steps speaks of s@1.
func TestExpectOnEmptySessionCLI(t *testing.T) {
	store := t.TempDir()
	_, errs, code := cli(t, store, `{}`, "commit", "s", "--expect", "1", "-")
	if code != 3 || !strings.Contains(errs, "conflict on s@1") || !strings.Contains(errs, "no steps") {
		t.Errorf("exit %d, %q; want exit 3, a conflict on s@1 saying the session has no steps", code, errs)
	}
}

// A FIFO in a committed directory is bad input (exit 2) named inside it.
func TestCommitDirWithFIFOExit2(t *testing.T) {
	store, src := t.TempDir(), t.TempDir()
	if err := mkfifo(t, src+"/ff"); err != nil {
		t.Skip(err)
	}
	_, errs, code := cli(t, store, "", "commit", "s", "--dir", src)
	if code != 2 || !strings.Contains(errs, "ff is a named pipe") || strings.Contains(errs, src) {
		t.Errorf("exit %d, %q; want exit 2 naming ff (not %s)", code, errs, src)
	}
}

// cairn log of a session removed and committed to again does not call
// the removed session's history pruned.
func TestLogAfterRmNotPruned(t *testing.T) {
	store := t.TempDir()
	commitSteps(t, store, "p", 3)
	if _, errs, code := cli(t, store, "", "rm", "p"); code != 0 {
		t.Fatal(errs)
	}
	commitSteps(t, store, "p", 1)
	out, errs, code := cli(t, store, "", "log", "p")
	if code != 0 || strings.Contains(out, "pruned") || strings.Count(out, "\n") != 1 {
		t.Errorf("log: exit %d, %q %q; want the one new step, nothing pruned", code, out, errs)
	}
	out, _, _ = cli(t, store, "", "log", "p", "--json")
	if strings.Contains(out, "truncated") {
		t.Errorf("log --json: %q; want no truncated mark", out)
	}
}

// Flag errors name the flag as it was typed.
func TestFlagErrorsAsTyped(t *testing.T) {
	store := t.TempDir()
	commitSteps(t, store, "s", 1)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"log", "-n", "3", "s"}, "log: unknown flag -n "},
		{[]string{"log", "--nope", "s"}, "log: unknown flag --nope "},
		{[]string{"show", "s", "-x"}, "show: unknown flag -x "},
		{[]string{"commit", "s", "-expect"}, "commit: -expect needs a value"},
		{[]string{"commit", "s", "--expect"}, "commit: --expect needs a value"},
		{[]string{"commit", "s", "-expect=x", "-"}, `commit: -expect "x": want`},
		{[]string{"commit", "s", "--expect=x", "-"}, `commit: --expect "x": want`},
		{[]string{"commit", "s", "-expect", "99999999999999999999999", "-"}, `commit: -expect "99999999999999999999999": out of range`},
		{[]string{"log", "s", "-json=maybe"}, `log: -json="maybe": want true or false`},
		{[]string{"commit", "s", "--expect", "1", "-expect=x", "-"}, `commit: -expect given twice`},
		{[]string{"commit", "s", "-expect", "1", "--expect", "x", "-"}, `commit: --expect given twice`},
		{[]string{"log", "s", "--json", "-json=no"}, `log: -json given twice`},
	} {
		_, errs, code := cli(t, store, `{}`, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("cairn %q: exit %d, %q; want exit 2 saying %q", c.args, code, errs, c.want)
		}
	}
}
