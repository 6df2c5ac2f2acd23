package main

import (
	"strings"
	"testing"
)

// TestReplyEmptyInputGiven: --input "" (--input "$A" with A unset) is
// an answer given empty, told apart from no --input at all: it said
// "--input is required" to a user who had given it.
func TestReplyEmptyInputGiven(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"q":1}`, "commit", "s", "-", "--status", "awaiting_input"); code != 0 {
		t.Fatal(errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"reply", "s", "--input", ""}, `cairn reply: --input "": the answer is empty; give a JSON value, such as {"approved":true}, or - to read it from stdin` + "\n"},
		{[]string{"reply", "s", "--input="}, `cairn reply: --input "": the answer is empty; give a JSON value, such as {"approved":true}, or - to read it from stdin` + "\n"},
		{[]string{"reply", "s"}, "cairn reply: --input is required\n"},
	} {
		_, errs, code := cli(t, store, "", c.args...)
		if code != 2 || errs != c.want {
			t.Errorf("cairn %s: exit %d, %q; want exit 2, %q", strings.Join(c.args, " "), code, errs, c.want)
		}
	}
	if out, _, _ := cli(t, store, "", "log", "s"); strings.Count(out, "\n") != 1 {
		t.Errorf("log after refused replies:\n%s", out)
	}
}
