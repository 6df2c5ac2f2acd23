package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A removed session's newest slot (its tombstone) replaced by another
// session's valid step object: gc, du and sessions refuse the store, so
// verify must report it too instead of calling the store clean.
func TestVerifyReportsReplacedTombstone(t *testing.T) {
	store := t.TempDir()
	for _, doc := range []string{`{"a":1}`, `{"a":2}`} {
		if _, errs, code := cli(t, store, doc, "commit", "a", "-"); code != 0 {
			t.Fatal(errs)
		}
		if _, errs, code := cli(t, store, doc, "commit", "c", "-"); code != 0 {
			t.Fatal(errs)
		}
	}
	if _, errs, code := cli(t, store, "", "rm", "c"); code != 0 {
		t.Fatal(errs)
	}
	tomb := filepath.Join(store, "steps", "c", "00000000000000000003")
	other, err := os.ReadFile(filepath.Join(store, "steps", "a", "00000000000000000002"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tomb, other, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, "", "gc", "--grace", "0s"); code != 1 {
		t.Fatalf("gc exit %d, want 1: %s", code, errs)
	}
	out, errs, code := cli(t, store, "", "verify")
	if code != 1 || !strings.Contains(out+errs, "steps/c/00000000000000000003") {
		t.Fatalf("verify exit %d, want 1 naming the replaced tombstone:\n%s%s", code, out, errs)
	}
}
