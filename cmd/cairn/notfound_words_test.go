package main

import (
	"strings"
	"testing"
)

// TestNotFoundInOneSentence: a session with no steps, or a removed one,
// is said in one sentence that names it once, exit 1, by every command
// that meets it. It was "cairn log: head of nosuch: not found: session
// has no steps" (the session twice, and "not found" before the reason),
// "cairn rm: remove s: session s: not found: the session was removed"
// (three times), "cairn verify: verify nosuch: not found: …".
func TestNotFoundInOneSentence(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{}`, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	if _, errs, code := cli(t, store, "", "rm", "s"); code != 0 {
		t.Fatal(errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"log", "nosuch"}, "cairn log: session nosuch not found: it has no steps\n"},
		{[]string{"show", "nosuch"}, "cairn show: session nosuch not found: it has no steps\n"},
		{[]string{"show", "nosuch@3"}, "cairn show: step nosuch@3 not found: session nosuch has no steps\n"},
		{[]string{"fork", "nosuch@1", "f"}, "cairn fork: step nosuch@1 not found: session nosuch has no steps\n"},
		{[]string{"verify", "nosuch"}, "cairn verify: session nosuch not found: it has no steps\n"},
		{[]string{"du", "nosuch"}, "cairn du: session nosuch not found: it has no steps\n"},
		{[]string{"prune", "nosuch", "--keep-last", "1"}, "cairn prune: session nosuch not found: it has no steps\n"},
		{[]string{"rm", "nosuch"}, "cairn rm: session nosuch not found: it has no steps\n"},
		{[]string{"log", "s"}, "cairn log: session s not found: it was removed\n"},
		{[]string{"show", "s@3"}, "cairn show: step s@3 not found: the session was removed\n"},
		{[]string{"rm", "s"}, "cairn rm: session s not found: it was removed\n"},
		{[]string{"verify", "s"}, "cairn verify: session s not found: it was removed\n"},
		{[]string{"du", "s"}, "cairn du: session s not found: it was removed\n"},
	} {
		out, errs, code := cli(t, store, "", c.args...)
		if code != 1 || out != "" || errs != c.want {
			t.Errorf("cairn %s: exit %d, %q %q; want exit 1, %q", strings.Join(c.args, " "), code, out, errs, c.want)
		}
	}
}
