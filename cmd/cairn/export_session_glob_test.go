package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A --session naming no session of the store (a typo) exported nothing
// from it and exited 0, the empty selection passing for a session with
// nothing to export. The export completes, then the glob is named, exit
// 1, and the manifest lists it; a glob that matches, beside another
// that matches the same session, is not named.
func TestExportSessionMatchingNothingIsNamed(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{}`, "commit", "run-1", "-", "--record", `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}`); code != 0 {
		t.Fatalf("commit: %s", errs)
	}
	for _, format := range []string{"openai-jsonl", "sharegpt", "atif", "parquet", "preference"} {
		out := filepath.Join(t.TempDir(), "out")
		_, errs, code := cli(t, store, "", "export", "--format", format, "--session", "run-1", "--session", "run-*", "--session", "rnu-1", "--out", out)
		if want := `cairn export: --session "rnu-1": no session of the store matches it`; code != 1 || !strings.HasSuffix(strings.TrimSpace(errs), want) {
			t.Errorf("%s: exit %d, stderr %q; want 1, ending %q", format, code, errs, want)
		}
		if b, err := os.ReadFile(out + ".manifest.json"); err != nil || !strings.Contains(string(b), `"unmatched_session_globs":["rnu-1"]`) {
			t.Errorf("%s: manifest %s (%v), want rnu-1 among unmatched_session_globs", format, b, err)
		}
		if _, errs, code := cli(t, store, "", "export", "--format", format, "--session", "run-*", "--session", "run-1", "--out", out); code != 0 {
			t.Errorf("%s: globs that match: exit %d, stderr %q", format, code, errs)
		}
	}
}
