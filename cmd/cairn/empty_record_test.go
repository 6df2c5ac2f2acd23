package main

import (
	"strings"
	"testing"
)

// TestCommitEmptyRecordRefused: --record "" is no JSON (the README: a
// record that is not JSON is exit 2), and --record-file "" names no
// file; both were taken as no record, so the step was committed without
// the record the user meant to give (--record "$R" with R unset), exit 0.
// Both are refused and nothing is committed.
func TestCommitEmptyRecordRefused(t *testing.T) {
	store := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--record", ""}, "cairn commit: --record is not valid JSON"},
		{[]string{"--record="}, "cairn commit: --record is not valid JSON"},
		{[]string{"--record-file", ""}, `cairn commit: --record-file "": give a file name`},
	} {
		out, errs, code := cli(t, store, `{}`, append([]string{"commit", "s", "-"}, c.args...)...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, c.want) {
			t.Errorf("commit s - %q: exit %d, out %q, err %q; want exit 2, %q", c.args, code, out, errs, c.want)
		}
	}
	if _, errs, code := cli(t, store, "", "log", "s"); code != 1 || !strings.Contains(errs, "has no steps") {
		t.Errorf("a step was committed: log s: exit %d, %q", code, errs)
	}
}
