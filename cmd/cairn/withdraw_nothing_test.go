package main

import (
	"strings"
	"testing"
)

// TestCommitWithdrawWithNoQuestion: cairn commit --withdraw on a head
// that asks no question exits 3 (a conflict, as cairn reply on such a
// head does) with one line naming the session and the step, and writes
// nothing. A retried withdrawal whose first try landed says the question
// is already gone; with --expect naming the question's step it says the
// head moved.
func TestCommitWithdrawWithNoQuestion(t *testing.T) {
	store := t.TempDir()
	for i := range 4 {
		if _, errs, code := cli(t, store, `{"a":1}`, "commit", "pr-7", "-"); code != 0 {
			t.Fatal(i, errs)
		}
	}
	out, errs, code := cli(t, store, `{"a":2}`, "commit", "pr-7", "-", "--withdraw")
	if code != 3 || out != "" || !strings.Contains(errs, "step 4 of session pr-7 asks no question; nothing to withdraw") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Fatalf("commit --withdraw on a head that asks nothing: exit %d, %q %q; want exit 3 naming step 4 of pr-7", code, out, errs)
	}
	if out, _, _ := cli(t, store, "", "log", "pr-7"); strings.Count(strings.TrimSpace(out), "\n") != 3 {
		t.Fatalf("the refused withdrawal wrote a step: log %q", out)
	}
	if _, errs, code := cli(t, store, `{"a":3}`, "commit", "pr-7", "-", "--status", "awaiting_input", "--record", `{"question":"ship it?"}`); code != 0 {
		t.Fatal(errs)
	}
	if _, errs, code := cli(t, store, `{"a":4}`, "commit", "pr-7", "-", "--withdraw"); code != 0 {
		t.Fatalf("commit --withdraw of the question at step 5: exit %d, %s", code, errs)
	}
	_, errs, code = cli(t, store, `{"a":4}`, "commit", "pr-7", "-", "--withdraw")
	if code != 3 || !strings.Contains(errs, "step 6 of session pr-7 asks no question") || !strings.Contains(errs, "step 5 was already answered or withdrawn by step 6") {
		t.Fatalf("a retried commit --withdraw: exit %d, %q; want exit 3 saying step 5's question is already gone", code, errs)
	}
	_, errs, code = cli(t, store, `{"a":4}`, "commit", "pr-7", "-", "--withdraw", "--expect", "5")
	if code != 3 || !strings.Contains(errs, "expected head 5, but the head is 6") {
		t.Fatalf("a retried commit --withdraw --expect 5: exit %d, %q", code, errs)
	}
}
