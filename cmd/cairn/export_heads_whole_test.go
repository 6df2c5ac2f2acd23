package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two export manifests in one --heads file (cat a.manifest.json
// b.manifest.json > both.json) re-exported a's trajectories alone and
// exited 0: b's were dropped without a word. The file is no export
// manifest: exit 2, said of the path, nothing written.
func TestExportHeadsTwoManifestsInOneFile(t *testing.T) {
	store := t.TempDir()
	for _, s := range []string{"a", "b"} {
		if _, errs, code := cli(t, store, `{"n":1}`, "commit", s, "-", "--record", chatRecord); code != 0 {
			t.Fatal(errs)
		}
	}
	dir := t.TempDir()
	var both []byte
	for _, s := range []string{"a", "b"} {
		out := filepath.Join(dir, s+".jsonl")
		if _, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--session", s, "--out", out); code != 0 {
			t.Fatal(errs)
		}
		m, err := os.ReadFile(out + ".manifest.json")
		if err != nil {
			t.Fatal(err)
		}
		both = append(both, m...)
	}
	heads := filepath.Join(dir, "both.json")
	if err := os.WriteFile(heads, both, 0o644); err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(dir, "again.jsonl")
	_, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--heads", heads, "--out", again)
	if want := "--heads " + heads + ": not an export manifest (text after its closing brace: give one manifest per file)"; code != 2 || !strings.Contains(errs, want) {
		t.Errorf("--heads of two manifests: exit %d, %q; want exit 2 saying %q", code, errs, want)
	}
	if _, err := os.Stat(again); !os.IsNotExist(err) {
		t.Errorf("--heads of two manifests left %s (%v)", again, err)
	}
}
