package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDuJSONSessionsIsAnArray: `cairn du --json` gives "sessions" as an
// array, empty when no session is live (every one removed, or the only
// one damaged), never null: a script iterating it must not fail on a
// workspace that has garbage but no sessions left.
func TestDuJSONSessionsIsAnArray(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "gone", "-"); code != 0 {
		t.Fatalf("commit: %s", errs)
	}
	if _, errs, code := cli(t, store, "", "rm", "gone"); code != 0 {
		t.Fatalf("rm: %s", errs)
	}
	out, errs, code := cli(t, store, "", "du", "--json")
	if code != 0 || !strings.Contains(out, `"sessions":[]`) {
		t.Fatalf("du --json after removing the only session: exit %d, %q %q; want \"sessions\":[]", code, out, errs)
	}

	// The only session damaged: du exits 1 naming it, and its JSON
	// still has an empty array.
	store = t.TempDir()
	if _, errs, code := cli(t, store, `{"b":1}`, "commit", "d", "-"); code != 0 {
		t.Fatalf("commit: %s", errs)
	}
	key := filepath.Join(store, "steps", "d", "00000000000000000001")
	b, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(key, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs, code = cli(t, store, "", "du", "--json")
	if code != 1 || !strings.Contains(out, `"sessions":[]`) || !strings.Contains(errs, "session d, step 1") {
		t.Fatalf("du --json of a store whose only session is damaged: exit %d, %q %q", code, out, errs)
	}
}
