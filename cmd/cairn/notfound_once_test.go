package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNotFoundSaidOnce: every way a step or session is not there is one
// line that says it once, exit 1. A step of the history whose object the
// store lost said "step d@3: not found: read session d, step 3: not
// found".
func TestNotFoundSaidOnce(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	store := t.TempDir()
	for range 6 {
		cli(t, store, `{}`, "commit", "d", "-")
	}
	for range 2 {
		cli(t, store, `{}`, "commit", "r", "-")
	}
	if err := os.Remove(filepath.Join(store, "steps", "d", "00000000000000000003")); err != nil {
		t.Fatal(err)
	}
	cli(t, store, "", "prune", "d", "--keep-last", "5")
	cli(t, store, "", "rm", "r")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"show", "d@3"}, "cairn show: step d@3 not found: the store has lost it (cairn verify lists what is missing)\n"},
		{[]string{"diff", "d@3", "d"}, "cairn diff: step d@3 not found: the store has lost it (cairn verify lists what is missing)\n"},
		{[]string{"show", "d@20"}, "cairn show: step d@20 not found: the session's head is step 6\n"},
		{[]string{"show", "d@1"}, "cairn show: step d@1 not found: pruned (the session's history starts at step 2)\n"},
		{[]string{"show", "nosuch"}, "cairn show: session nosuch not found: it has no steps\n"},
		{[]string{"show", "nosuch@2"}, "cairn show: step nosuch@2 not found: session nosuch has no steps\n"},
		{[]string{"show", "r"}, "cairn show: session r not found: it was removed\n"},
		{[]string{"show", "r@1"}, "cairn show: step r@1 not found: the session was removed; if a session was forked from r above step 1, its history still holds this step, as its step 1 (cairn log FORK lists it)\n"},
	} {
		_, errs, code := cli(t, store, "", c.args...)
		if code != 1 || errs != c.want || strings.Count(errs, "not found") > 1 {
			t.Errorf("cairn %s: exit %d, %q; want 1, %q", strings.Join(c.args, " "), code, errs, c.want)
		}
	}
}
