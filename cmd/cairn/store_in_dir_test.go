package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommitDirHoldingTheStore: commit --dir of a directory that holds
// the store (--store inside it, or the default store under a home
// directory committed whole) is bad input, exit 2, said in words, and
// writes nothing. It committed the store into each step, every step
// carrying the store's previous steps.
func TestCommitDirHoldingTheStore(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, store := range []string{filepath.Join(work, ".cairn"), filepath.Join(work, "sub", "store")} {
		for i := 0; i < 2; i++ { // the store not made yet, then made
			if i == 1 {
				if _, errs, code := cli(t, store, `{}`, "commit", "other", "-"); code != 0 {
					t.Fatalf("commit to %s: exit %d: %s", store, code, errs)
				}
			}
			out, errs, code := cli(t, store, "", "commit", "x", "--dir", work)
			if want := "holds the store"; code != 2 || out != "" || !strings.Contains(errs, want) {
				t.Errorf("commit --dir %s with the store %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", work, store, code, out, errs, want)
			}
			if _, err := os.Stat(filepath.Join(store, "steps", "x")); !os.IsNotExist(err) {
				t.Errorf("the refused commit wrote session x (stat: %v)", err)
			}
		}
		if err := os.RemoveAll(store); err != nil {
			t.Fatal(err)
		}
	}
	// The default store, under a home directory committed whole.
	t.Setenv("CAIRN_STORE", "")
	t.Setenv("XDG_DATA_HOME", filepath.Join(work, "data"))
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"commit", "x", "--dir", work}, strings.NewReader(""), &out, &errb); code != 2 || !strings.Contains(errb.String(), "holds the store") {
		t.Errorf("commit --dir of the default store's parent: exit %d, %q, %q; want exit 2", code, out.String(), errb.String())
	}
	// A store beside the directory is fine.
	if _, errs, code := cli(t, t.TempDir(), "", "commit", "x", "--dir", work); code != 0 {
		t.Errorf("commit --dir with the store beside it: exit %d: %s", code, errs)
	}
}

// TestRunDirHoldingTheStore: run --dir of a directory that holds the
// store (--store inside it) is bad input, exit 2, said in words, and
// runs nothing. The run emptied the directory at its end, and with it
// the store and every step the command had committed there.
func TestRunDirHoldingTheStore(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	work := filepath.Join(t.TempDir(), "work")
	store := filepath.Join(work, "store")
	ran := filepath.Join(t.TempDir(), "ran")
	_, errs, code := cli(t, store, "", "run", "s", "--dir", work, "--", "sh", "-c",
		`touch "$1"; echo '{"a":1}' | cairn commit s -`, "sh", ran)
	if want := "holds the store"; code != 2 || !strings.Contains(errs, want) {
		t.Errorf("run --dir %s with the store %s: exit %d, stderr %q; want exit 2 and %q", work, store, code, errs, want)
	}
	if _, err := os.Stat(ran); !os.IsNotExist(err) {
		t.Errorf("the refused run ran its command (stat: %v)", err)
	}
	// A store beside the directory is fine.
	if _, errs, code := cli(t, filepath.Join(t.TempDir(), "store"), "", "run", "s", "--dir", work, "--", "true"); code != 0 {
		t.Errorf("run --dir with the store beside it: exit %d: %s", code, errs)
	}
}
