package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommitDirHoldingTheCache: commit --dir of a directory that holds
// cairn's own cache directory ($CAIRN_CACHE_DIR, or $XDG_CACHE_HOME/cairn,
// inside it: a project whose CI keeps its caches in ./.cache) is bad
// input, exit 2, said in words, and writes nothing. It committed the
// caches the commit itself was writing (the stat cache, the head cache,
// its in-flight marker) into each step, so an untouched directory never
// committed unchanged: `cairn diff` of two commits of it listed
// .cache-cairn/heads/….inflight files.
func TestCommitDirHoldingTheCache(t *testing.T) {
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(t.TempDir(), "store")
	refused := func(how string) {
		t.Helper()
		out, errs, code := cli(t, store, "", "commit", "x", "--dir", work)
		if want := "holds cairn's cache directory"; code != 2 || out != "" || !strings.Contains(errs, want) || !strings.Contains(errs, "CAIRN_CACHE_DIR") {
			t.Errorf("commit --dir %s with %s: exit %d, stdout %q, stderr %q; want exit 2, %q and how to move the caches", work, how, code, out, errs, want)
		}
		if _, err := os.Stat(filepath.Join(store, "steps", "x")); !os.IsNotExist(err) {
			t.Errorf("the refused commit (%s) wrote session x (stat: %v)", how, err)
		}
	}
	cache := filepath.Join(work, ".cache-cairn")
	t.Setenv("CAIRN_CACHE_DIR", cache)
	refused("$CAIRN_CACHE_DIR inside it, not made yet")
	if err := os.MkdirAll(filepath.Join(cache, "heads"), 0o755); err != nil {
		t.Fatal(err)
	}
	refused("$CAIRN_CACHE_DIR inside it")
	if err := os.RemoveAll(cache); err != nil {
		t.Fatal(err)
	}
	// Relative, as a user writes it from the directory committed.
	t.Chdir(work)
	t.Setenv("CAIRN_CACHE_DIR", ".cache-cairn")
	refused("a relative $CAIRN_CACHE_DIR inside it")
	t.Setenv("CAIRN_CACHE_DIR", "")
	t.Setenv("XDG_CACHE_HOME", filepath.Join(work, ".cache"))
	refused("$XDG_CACHE_HOME inside it")

	// Caches off, or beside the directory: committed, twice alike.
	for _, c := range []string{"off", filepath.Join(t.TempDir(), "cache")} {
		t.Setenv("CAIRN_CACHE_DIR", c)
		for i := 0; i < 2; i++ {
			if _, errs, code := cli(t, store, "", "commit", "x", "--dir", work); code != 0 {
				t.Fatalf("commit --dir with CAIRN_CACHE_DIR=%s: exit %d: %s", c, code, errs)
			}
		}
		out, errs, code := cli(t, store, "", "diff", "x@1", "x")
		if code != 0 || out != "" {
			t.Errorf("diff of two commits of an untouched directory (CAIRN_CACHE_DIR=%s): exit %d, %q, %s; want no change", c, code, out, errs)
		}
		if _, errs, code := cli(t, store, "", "rm", "x"); code != 0 {
			t.Fatalf("rm x: exit %d: %s", code, errs)
		}
		store = filepath.Join(t.TempDir(), "store")
	}
}

// TestRunDirHoldingTheCache: run --dir of a directory that holds cairn's
// cache directory is bad input, exit 2, and runs nothing. The command's
// commits stored the caches (the run's own record of the directory
// included) in each step, the run deleted them when it emptied the
// directory, and its next start checked the stored copies out into the
// live cache.
func TestRunDirHoldingTheCache(t *testing.T) {
	work := filepath.Join(t.TempDir(), "work")
	t.Setenv("CAIRN_CACHE_DIR", filepath.Join(work, ".c"))
	store := filepath.Join(t.TempDir(), "store")
	ran := filepath.Join(t.TempDir(), "ran")
	_, errs, code := cli(t, store, "", "run", "s", "--dir", work, "--", "sh", "-c",
		`touch "$1"; echo x > "$CAIRN_STATE_DIR/f"; "$2" commit s --dir "$CAIRN_STATE_DIR"`, "sh", ran, cairnBinary(t))
	if want := "holds cairn's cache directory"; code != 2 || !strings.Contains(errs, want) {
		t.Errorf("run --dir %s with the cache inside it: exit %d, stderr %q; want exit 2 and %q", work, code, errs, want)
	}
	if _, err := os.Stat(ran); !os.IsNotExist(err) {
		t.Errorf("the refused run ran its command (stat: %v)", err)
	}
	// The cache beside the directory is fine.
	t.Setenv("CAIRN_CACHE_DIR", filepath.Join(t.TempDir(), "cache"))
	if _, errs, code := cli(t, store, "", "run", "s", "--dir", work, "--", "true"); code != 0 {
		t.Errorf("run --dir with the cache beside it: exit %d: %s", code, errs)
	}
}
