package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCommitDirKeepsStatCache checks that commit --dir keeps its stat
// cache under $XDG_CACHE_HOME/cairn, and that later commits through it
// store every change.
func TestCommitDirKeepsStatCache(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	store, src := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "a.txt"), []byte("first version of a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, "", "commit", "files", "--dir", src); code != 0 {
		t.Fatalf("commit: exit %d: %s", code, errs)
	}
	files, _ := filepath.Glob(filepath.Join(cache, "cairn", "dirs", "*.dircache"))
	if len(files) != 1 {
		t.Fatalf("cache files after a commit: %v, want one", files)
	}
	if err := os.WriteFile(filepath.Join(src, "a.txt"), []byte("second version of a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, "", "commit", "files", "--dir", src); code != 0 {
		t.Fatalf("second commit: exit %d: %s", code, errs)
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, errs, code := cli(t, store, "", "checkout", "files", "--dir", out); code != 0 {
		t.Fatalf("checkout: exit %d: %s", code, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "a.txt")); string(b) != "second version of a" {
		t.Errorf("checked out %q", b)
	}
}
