package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommitPatchCLI: commit --patch FILE and --patch - change the
// head's document; a patch that fails exits 2, says which operation
// failed, and commits nothing.
func TestCommitPatchCLI(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"messages":["a"],"n":1}`, "commit", "s", "-"); code != 0 {
		t.Fatalf("commit: exit %d: %s", code, errs)
	}
	file := filepath.Join(t.TempDir(), "ops.json")
	if err := os.WriteFile(file, []byte(`[{"op":"add","path":"/messages/-","value":"b"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, "", "commit", "s", "--patch", file); code != 0 {
		t.Fatalf("commit --patch FILE: exit %d: %s", code, errs)
	}
	if _, errs, code := cli(t, store, `[{"op":"replace","path":"/n","value":2}]`, "commit", "s", "--patch", "-", "--expect", "2"); code != 0 {
		t.Fatalf("commit --patch -: exit %d: %s", code, errs)
	}
	if out, _, _ := cli(t, store, "", "show", "s"); out != `{"messages":["a","b"],"n":2}`+"\n" {
		t.Fatalf("show after patches = %q", out)
	}
	_, errs, code := cli(t, store, `[{"op":"remove","path":"/messages/7"}]`, "commit", "s", "--patch", "-")
	if code != 2 || !strings.Contains(errs, "patch op 1 (remove /messages/7): no element 7 (the array has 2)") {
		t.Fatalf("failed patch: exit %d, stderr %q", code, errs)
	}
	if out, _, _ := cli(t, store, "", "log", "s"); strings.Count(out, "\n") != 3 {
		t.Fatalf("a failed patch committed a step: log %q", out)
	}
	if _, errs, code := cli(t, store, "", "commit", "s", "--patch", filepath.Join(t.TempDir(), "nope.json")); code != 2 || !strings.Contains(errs, "--patch ") {
		t.Fatalf("--patch of a missing file: exit %d, stderr %q", code, errs)
	}
	for _, ops := range []string{`[5]`, `{"op":"add"}`, `not json`} {
		if _, errs, code := cli(t, store, ops, "commit", "s", "--patch", "-"); code != 2 || !strings.Contains(errs, "patch") || strings.Contains(errs, "Go ") {
			t.Fatalf("malformed patch %s: exit %d, stderr %q", ops, code, errs)
		}
	}
	if out, _, _ := cli(t, store, "", "log", "s"); strings.Count(out, "\n") != 3 {
		t.Fatalf("a malformed patch committed a step: log %q", out)
	}
	if _, _, code := cli(t, store, "{}", "commit", "s", "-", "--patch", file); code != 2 {
		t.Fatalf("--patch with another source: exit %d, want 2", code)
	}
}
