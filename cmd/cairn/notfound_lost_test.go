package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLostStepSaidOnce: a step the store has lost, and a fork's step
// below where its history starts, say what is missing and why once,
// exit 1, with no "not found:" before why: they said "step d@3: not
// found: the store has lost it (…)" and "step x@2: not found: the
// history of x starts at step 5".
func TestLostStepSaidOnce(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	store := t.TempDir()
	for range 5 {
		cli(t, store, `{}`, "commit", "d", "-")
	}
	// x, forked from a@6: a's name was removed and written again (a@5,
	// a@6, the first with no parent). x's base marker is gone (a store
	// of an older cairn) and a's old steps swept: x's history starts at
	// a@5.
	for range 3 {
		cli(t, store, `{}`, "commit", "a", "-")
	}
	cli(t, store, "", "rm", "a")
	for range 2 {
		cli(t, store, `{}`, "commit", "a", "-")
	}
	if _, errs, code := cli(t, store, "", "fork", "a", "x"); code != 0 {
		t.Fatalf("fork a x: exit %d, %s", code, errs)
	}
	gone := []string{filepath.Join("d", "00000000000000000003"), filepath.Join("x", "base"), filepath.Join("x", "base.00000000000000000005")}
	for i := 1; i <= 4; i++ {
		gone = append(gone, filepath.Join("a", "0000000000000000000"+string(rune('0'+i))))
	}
	for _, f := range gone {
		if err := os.Remove(filepath.Join(store, "steps", f)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"show", "d@3"}, "cairn show: step d@3 not found: the store has lost it (cairn verify lists what is missing)\n"},
		{[]string{"diff", "d@3", "d"}, "cairn diff: step d@3 not found: the store has lost it (cairn verify lists what is missing)\n"},
		{[]string{"log", "d@3"}, "cairn log: step d@3 not found: the store has lost it (cairn verify lists what is missing)\n"},
		{[]string{"show", "x@2"}, "cairn show: step x@2 not found: the session's history starts at step 5\n"},
	} {
		_, errs, code := cli(t, store, "", c.args...)
		if code != 1 || errs != c.want || strings.Count(errs, "not found") != 1 {
			t.Errorf("cairn %s: exit %d, %q; want 1, %q", strings.Join(c.args, " "), code, errs, c.want)
		}
	}
}
