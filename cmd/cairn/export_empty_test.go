package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestExportEmptySelectorRefused: a selector given an empty value
// (--outcome "$O" with O unset) was taken as no selector, so the export
// wrote every trajectory, exit 0: --outcome "" put failures in a set of
// successes, --heads "" made a fresh export of the whole store instead
// of the manifest's re-export. Like --session "", each is refused
// (exit 2), naming the flag, and nothing is written.
func TestExportEmptySelectorRefused(t *testing.T) {
	store := chatStore(t)
	dir := t.TempDir()
	for _, f := range []string{"outcome", "status", "since", "until", "min-reward", "max-reward", "heads", "branches", "manifest"} {
		outPath := filepath.Join(dir, f+".jsonl")
		out, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--out", outPath, "--"+f, "")
		if code != 2 || out != "" || !strings.HasPrefix(errs, "cairn export: --"+f+` "": `) {
			t.Errorf("--%s '': exit %d, out %q, err %q; want exit 2 refusing the empty value", f, code, out, errs)
		}
		if tree := listTree(t, dir); tree != "" {
			t.Fatalf("--%s '': wrote %s", f, tree)
		}
	}
}
