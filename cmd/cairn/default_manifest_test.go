package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDefaultManifestPathNamedAsSuch: with --out PATH and no --manifest,
// a PATH.manifest.json that cannot be written was refused as
// "--manifest PATH.manifest.json: is a directory", naming a flag the user
// never gave. It is named as the export manifest, with the flag that
// moves it.
func TestDefaultManifestPathNamedAsSuch(t *testing.T) {
	store := chatStore(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "x.jsonl")
	if err := os.Mkdir(out+".manifest.json", 0o755); err != nil {
		t.Fatal(err)
	}
	_, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--out", out)
	want := "cairn export: the export manifest " + out + ".manifest.json: is a directory; give a file name (with --manifest PATH)\n"
	if code != 2 || errs != want || strings.Contains(errs, "--manifest "+out) {
		t.Errorf("exit %d, %q; want 2, %q", code, errs, want)
	}
}
