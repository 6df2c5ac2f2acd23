package main

import (
	"strings"
	"testing"
)

// TestRunSessionFirst: every other command names its session first
// (commit S, log S), and cairn run S -- CMD answered only with its usage;
// run takes the session there as it takes --session S. Two different
// sessions, or none, are still usage errors that say so.
func TestRunSessionFirst(t *testing.T) {
	store := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "r", "--", "true"}, 0, ""},
		{[]string{"run", "--session", "r", "r", "--", "true"}, 0, ""},
		{[]string{"run", "r", "--session", "q", "--", "true"}, 2, "two sessions given, r and --session q"},
		{[]string{"run", "--", "true"}, 2, "which session? want run [--session] S"},
		{[]string{"run", "r", "s", "--", "true"}, 2, ""},
	} {
		_, errs, code := cli(t, store, "", c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("cairn %s: exit %d, %q; want exit %d saying %q", strings.Join(c.args, " "), code, errs, c.code, c.want)
		}
	}
}
