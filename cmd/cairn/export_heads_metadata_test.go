package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docs/export.md: an export re-exported from its manifest with --heads
// (and the same --format) is the same byte for byte. For an export
// written with --metadata=false it was not: the manifest did not say
// so, and the re-export wrote every line with its metadata object. The
// manifest now records "metadata":false and the re-export follows it;
// --metadata given with --heads still decides.
func TestExportHeadsKeepsMetadataOff(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"n":1}`, "commit", "a", "-", "--record", chatRecord); code != 0 {
		t.Fatal(errs)
	}
	dir := t.TempDir()
	for _, format := range []string{"openai-jsonl", "sharegpt"} {
		first := filepath.Join(dir, format)
		if _, errs, code := cli(t, store, "", "export", "--format", format, "--metadata=false", "--out", first); code != 0 {
			t.Fatal(errs)
		}
		again := first + ".again"
		if _, errs, code := cli(t, store, "", "export", "--format", format, "--heads", first+".manifest.json", "--out", again); code != 0 {
			t.Fatal(errs)
		}
		want, _ := os.ReadFile(first)
		got, _ := os.ReadFile(again)
		if string(got) != string(want) || strings.Contains(string(got), "metadata") {
			t.Errorf("%s: re-export of a --metadata=false export:\n%s\nwant\n%s", format, got, want)
		}
		withMeta := first + ".meta"
		if _, errs, code := cli(t, store, "", "export", "--format", format, "--heads", first+".manifest.json", "--metadata=true", "--out", withMeta); code != 0 {
			t.Fatal(errs)
		}
		if got, _ := os.ReadFile(withMeta); !strings.Contains(string(got), `"metadata":{"session":"a"`) {
			t.Errorf("%s: --heads with --metadata=true: %s", format, got)
		}
	}
}
