package main

import (
	"strings"
	"testing"
)

// TestDoubleDashEndsFlags: a session name may start with '-' ("-x", even
// "--"), and after -- every argument is positional; but the parser that
// lets flags come after positional arguments read "-x" after -- as a
// flag again: "cairn show -- -x" said "unknown flag -x", so such a
// session could be committed to by no command. A -- that is a flag's
// value (--record --) ends nothing.
func TestDoubleDashEndsFlags(t *testing.T) {
	store := t.TempDir()
	for _, c := range []struct {
		stdin string
		args  []string
		code  int
		want  string
	}{
		{`{"m":1}`, []string{"commit", "--", "-x", "-"}, 0, "-x@1 "},
		{"", []string{"show", "--", "-x"}, 0, `{"m":1}`},
		{"", []string{"show", "--json", "--", "-x"}, 0, `{"m":1}`},
		{"", []string{"fork", "--", "-x", "-y"}, 0, "-y@1 (fork of -x@1)"},
		{"", []string{"log", "--", "-y"}, 0, "-y@1"},
		{`{"m":2}`, []string{"commit", "--", "--", "-"}, 0, "--@1 "},
		{"", []string{"show", "--", "--"}, 0, `{"m":2}`},
		{`{}`, []string{"commit", "s", "--record", "--", "-"}, 2, "--record is not valid JSON"},
		{"", []string{"show", "-x"}, 2, "unknown flag -x"},
	} {
		out, errs, code := cli(t, store, c.stdin, c.args...)
		if code != c.code || !strings.Contains(out+errs, c.want) {
			t.Errorf("cairn %q: exit %d, %q %q; want exit %d saying %q", c.args, code, out, errs, c.code, c.want)
		}
	}
}
