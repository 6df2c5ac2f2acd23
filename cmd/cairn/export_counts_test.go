package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// The export's last line counts in words that agree with the numbers,
// as it already did for sessions: "1 trajectory, 1 step", not
// "1 trajectories, 1 steps".
func TestExportSummaryCountsOne(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{}`, "commit", "s", "-", "--record", `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}`); code != 0 {
		t.Fatalf("commit: %s", errs)
	}
	if _, errs, code := cli(t, store, `{}`, "commit", "s", "-", "--record", `"raw"`); code != 0 {
		t.Fatalf("commit: %s", errs)
	}
	out := filepath.Join(t.TempDir(), "one.jsonl")
	_, errs, code := cli(t, store, "", "export", "--format", "atif", "--out", out)
	if code != 0 {
		t.Fatalf("export exit %d: %s", code, errs)
	}
	if want := "exported 1 trajectory, 2 steps to " + out + " (0 sessions skipped, 1 raw record)\n"; !strings.Contains(errs, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errs)
	}
}
