package main

import (
	"encoding/json"
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
	// The JSON names it too, so that a script reading stdout alone can
	// tell an empty workspace from one whose sessions cannot be read.
	var u struct {
		Unreadable []struct{ Session, Error string }
	}
	if err := json.Unmarshal([]byte(out), &u); err != nil || len(u.Unreadable) != 1 ||
		u.Unreadable[0].Session != "d" || !strings.Contains(u.Unreadable[0].Error, "session d, step 1") {
		t.Fatalf("du --json does not name the damaged session: %q (%v)", out, err)
	}
	if strings.Contains(u.Unreadable[0].Error, "steps/") {
		t.Errorf("du --json names a store key: %q", u.Unreadable[0].Error)
	}
}

// TestDuJSONUnreadableIsAnArray: with nothing damaged, "unreadable" is an
// empty array.
func TestDuJSONUnreadableIsAnArray(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "s", "-"); code != 0 {
		t.Fatalf("commit: %s", errs)
	}
	if out, errs, code := cli(t, store, "", "du", "--json"); code != 0 || !strings.Contains(out, `"unreadable":[]`) {
		t.Fatalf("du --json: exit %d, %q %q", code, out, errs)
	}
}
