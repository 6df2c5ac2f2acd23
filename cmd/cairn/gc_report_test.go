package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestGCJSONListsAreArrays: gc --json gives deleted_keys and
// tombstone_keys as arrays, empty when gc deleted or fenced nothing, so
// that a script can iterate them (jq '.deleted_keys[]') whatever the run
// found.
func TestGCJSONListsAreArrays(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"i":1}`, "commit", "a", "-"); code != 0 {
		t.Fatalf("commit: exit %d: %s", code, errs)
	}
	for _, args := range [][]string{{"gc", "--json"}, {"gc", "--json", "--dry-run"}} {
		out, errs, code := cli(t, store, "", args...)
		if code != 0 {
			t.Fatalf("cairn %s: exit %d: %s", strings.Join(args, " "), code, errs)
		}
		var rep map[string]json.RawMessage
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("cairn %s: %v: %q", strings.Join(args, " "), err, out)
		}
		for _, k := range []string{"deleted_keys", "tombstone_keys"} {
			if got, want := string(rep[k]), "[]"; got != want {
				t.Errorf("cairn %s: %s is %s; want %s", strings.Join(args, " "), k, got, want)
			}
		}
	}
}

// TestGCVerboseWordsAsDocumented: gc --verbose names a slot it fences
// with a tombstone (a session an older cairn removed) in the words
// docs/maintenance.md quotes, and --json lists its key.
func TestGCVerboseWordsAsDocumented(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	store := t.TempDir()
	for i := 1; i <= 3; i++ {
		if _, errs, code := cli(t, store, `{"i":`+strconv.Itoa(i)+`}`, "commit", "old", "-"); code != 0 {
			t.Fatalf("commit %d: exit %d: %s", i, code, errs)
		}
	}
	// An older cairn's rm only raised the base one above the head.
	if err := os.WriteFile(filepath.Join(store, "steps", "old", "base"), []byte("4"), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "maintenance.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{"gc", "--verbose", "--dry-run"}, "would fence with a tombstone"},
		{[]string{"gc", "--verbose"}, "fenced with a tombstone"},
	} {
		out, errs, code := cli(t, store, "", c.args...)
		if code != 0 {
			t.Fatalf("cairn %s: exit %d: %s", strings.Join(c.args, " "), code, errs)
		}
		if want := c.words + " steps/old/00000000000000000004\n"; !strings.Contains(out, want) {
			t.Errorf("cairn %s: %q; want a line %q", strings.Join(c.args, " "), out, want)
		}
		if !strings.Contains(text, "`"+c.words) {
			t.Errorf("docs/maintenance.md does not quote gc --verbose's %q", c.words)
		}
	}
}
