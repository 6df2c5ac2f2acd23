package main

import "testing"

// TestRunFailureBeforeFirstStep: a command that fails before its
// session has a step was said to fail "at m@0", a step reference the
// command line refuses ("steps are numbered from 1"). It is said to
// fail before the session's first step.
func TestRunFailureBeforeFirstStep(t *testing.T) {
	store := t.TempDir()
	_, errs, code := cli(t, store, "", "run", "--session", "m", "--", "false")
	want := "cairn run: false exited with status 1 before m's first step: gave up after 1 failed start in a row without a new step\n"
	if code != 1 || errs != want {
		t.Fatalf("run of false on a new session: exit %d, %q; want 1, %q", code, errs, want)
	}
}
