package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestRmPruneGCDu drives the maintenance commands through the CLI: exit
// codes, output, and that gc frees what rm left behind.
func TestRmPruneGCDu(t *testing.T) {
	store := t.TempDir()
	for n := 1; n <= 6; n++ {
		doc := fmt.Sprintf(`{"n":%d,"text":"%s"}`, n, strings.Repeat(fmt.Sprintf("line %d ", n), 40))
		for _, s := range []string{"keep", "drop"} {
			if _, errs, code := cli(t, store, doc, "commit", s, "-"); code != 0 {
				t.Fatalf("commit %s: %s", s, errs)
			}
		}
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"prune", "keep"}, 2},                     // --keep-last missing
		{[]string{"prune", "keep", "--keep-last", "x"}, 2}, // not a number
		{[]string{"prune", "bad/name", "--keep-last", "1"}, 2},
		{[]string{"rm"}, 2},
		{[]string{"rm", "nope"}, 1},
		{[]string{"gc", "--grace", "-1s"}, 2},
		{[]string{"gc", "extra"}, 2},
		{[]string{"du", "nope"}, 1},
	} {
		if _, errs, code := cli(t, store, "", c.args...); code != c.code {
			t.Errorf("cairn %v: exit %d (%q), want %d", c.args, code, errs, c.code)
		}
	}
	out, errs, code := cli(t, store, "", "prune", "keep", "--keep-last", "2")
	if code != 0 || !strings.Contains(out, "pruned keep: 4 steps; history now 5..6") {
		t.Fatalf("prune: %d %q %q", code, out, errs)
	}
	out, _, _ = cli(t, store, "", "log", "keep", "--json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], `"truncated":true`) {
		t.Fatalf("log after prune: %q", out)
	}
	if out, errs, code = cli(t, store, "", "rm", "drop"); code != 0 || !strings.Contains(out, "removed drop: 6 steps") {
		t.Fatalf("rm: %d %q %q", code, out, errs)
	}
	if out, _, _ = cli(t, store, "", "sessions"); strings.Contains(out, "drop") {
		t.Fatalf("sessions lists a removed session: %q", out)
	}
	if _, _, code = cli(t, store, "", "show", "drop"); code != 1 {
		t.Fatalf("show of a removed session: exit %d", code)
	}
	du := func() map[string]any {
		out, errs, code := cli(t, store, "", "du", "--json")
		var u map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &u) != nil {
			t.Fatalf("du --json: %d %q %q", code, out, errs)
		}
		return u
	}
	if u := du(); u["garbage_objects"].(float64) != 6 {
		t.Fatalf("du after rm: %v", u)
	}
	// rm fenced the slot above the removed session's last step with a
	// tombstone (a writer still building on that step loses it): a
	// commit expecting that step is refused.
	if _, errs, code := cli(t, store, `{"x":1}`, "commit", "drop", "--expect", "6", "-"); code != 3 || !strings.Contains(errs, "removed") {
		t.Fatalf("commit to a removed session expecting its old head: exit %d %q", code, errs)
	}
	// The first run has nothing to fence and deletes nothing yet.
	if out, _, code = cli(t, store, "", "gc", "--grace", "0s", "--verbose"); code != 0 || !strings.Contains(out, "deleted 0 objects") ||
		strings.Contains(out, "tombstone") {
		t.Fatalf("first gc: %q", out)
	}
	// Step objects younger than manifest.SlotFenceAge stay, whatever
	// --grace says: a writer paused below one of them would fill its slot
	// again.
	if out, _, code = cli(t, store, "", "gc", "--grace", "0s", "--verbose"); code != 0 || !strings.Contains(out, "deleted 0 objects") {
		t.Fatalf("gc of steps written just now: %q", out)
	}
	ageStore(t, store)
	// --verbose says what goes (issue 15 item 9).
	if out, _, code = cli(t, store, "", "gc", "--grace", "0s", "--dry-run", "--verbose"); code != 0 ||
		strings.Count(out, "would delete steps/drop/") != 6 || strings.Contains(out, "tombstone") ||
		!strings.Contains(out, "would delete 6 objects") {
		t.Fatalf("dry run: %q", out)
	}
	out, _, code = cli(t, store, "", "gc", "--grace", "0s", "--json")
	var rep map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep["deleted"].(float64) != 6 || rep["tombstones"].(float64) != 0 {
		t.Fatalf("second gc: %q", out)
	}
	t.Logf("gc: %s", strings.TrimSpace(out))
	if u := du(); u["garbage_objects"].(float64) != 0 || len(u["sessions"].([]any)) != 1 {
		t.Fatalf("du after gc: %v", u)
	}
	out, _, code = cli(t, store, "", "du")
	if code != 0 || !strings.Contains(out, "keep") || !strings.Contains(out, "total:") {
		t.Fatalf("du: %q", out)
	}
	t.Logf("du:\n%s", out)
	if out, _, code = cli(t, store, "", "verify"); code != 0 {
		t.Fatalf("verify after gc: %q", out)
	}
}
