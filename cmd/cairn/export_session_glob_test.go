package main

import (
	"os"
	"path/filepath"
	"strconv"
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

// TestExportBadSessionGlobSaidOfTheFlag: a --session that is no glob (an
// unclosed [, a trailing \) is bad input said of the flag, as every other
// export flag's bad value is, not in Go's words for a bad pattern.
func TestExportBadSessionGlobSaidOfTheFlag(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{}`, "commit", "run-1", "-"); code != 0 {
		t.Fatalf("commit: %s", errs)
	}
	for _, glob := range []string{"run-[", `run-\`} {
		out, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--session", glob)
		want := "--session " + strconv.Quote(glob) + ": not a glob"
		if code != 2 || out != "" || !strings.Contains(errs, want) || strings.Contains(errs, "syntax error in pattern") {
			t.Errorf("--session %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", glob, code, out, errs, want)
		}
	}
}
