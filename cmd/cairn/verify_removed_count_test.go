package main

import (
	"strings"
	"testing"
)

// TestVerifyCountsLiveSessionsOnly: verify's session count is the sessions
// `cairn sessions` lists. A removed session's tombstone (and the old steps
// a fork still uses) are still checked, but it is no session any more:
// before, a workspace of one session after `cairn rm` of its fork's
// parent said "verified 2 sessions".
func TestVerifyCountsLiveSessionsOnly(t *testing.T) {
	store := t.TempDir()
	for i := 1; i <= 3; i++ {
		if _, errs, code := cli(t, store, `{"a":1}`, "commit", "p", "-"); code != 0 {
			t.Fatalf("commit: %s", errs)
		}
	}
	if _, errs, code := cli(t, store, "", "fork", "p@2", "q"); code != 0 {
		t.Fatalf("fork: %s", errs)
	}
	if _, errs, code := cli(t, store, "", "rm", "p"); code != 0 {
		t.Fatalf("rm: %s", errs)
	}
	out, errs, code := cli(t, store, "", "verify")
	if code != 0 || !strings.HasPrefix(out, "verified 1 session, 2 steps, ") {
		t.Fatalf("verify after rm of a fork's parent: exit %d, %q %q; want \"verified 1 session, 2 steps, …\"", code, out, errs)
	}
	out, errs, code = cli(t, store, "", "verify", "--json")
	if code != 0 || !strings.Contains(out, `"sessions":1,`) {
		t.Fatalf("verify --json: exit %d, %q %q", code, out, errs)
	}
}
