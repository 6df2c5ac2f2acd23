package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDirectoryWithFilesAtStepKey: a directory that holds files where
// a step of a local store belongs is said by verify as the step's
// damage, exit 1, as an empty one is, and du and gc refuse the store in
// the words a commit meets, deleting nothing. Before, verify said 0
// problems (the files under the step's name are no keys of the layout)
// and gc ran, though no commit of the step could land.
func TestDirectoryWithFilesAtStepKey(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"n":1}`, "commit", "e", "-"); code != 0 {
		t.Fatal(errs)
	}
	dir := filepath.Join(store, "steps", "e", "00000000000000000002")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	said := "holds a directory where step e@2 belongs: remove it to repair"
	if _, errs, code := cli(t, store, `{"n":2}`, "commit", "e", "-"); code != 1 || !strings.Contains(errs, said) {
		t.Fatalf("commit e: exit %d, %q; want exit 1, %q", code, errs, said)
	}
	out, errs, code := cli(t, store, "", "verify")
	if want := "BAD step e@2 is not a file (the store holds a directory where it belongs)"; code != 1 || !strings.Contains(out, want) {
		t.Errorf("verify: exit %d, %q %q; want exit 1, %q", code, out, errs, want)
	}
	for _, args := range [][]string{{"du"}, {"gc", "--grace", "0s"}} {
		if out, errs, code := cli(t, store, "", args...); code != 1 || !strings.Contains(errs, said) {
			t.Errorf("%s: exit %d, %q %q; want exit 1, %q", args[0], code, out, errs, said)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err != nil {
		t.Errorf("the file under the step's name: %v", err)
	}
	// Removing the directory repairs the store.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := cli(t, store, "", "verify"); code != 0 || !strings.HasSuffix(out, ": 0 problems\n") {
		t.Errorf("verify after the repair: exit %d, %q %q", code, out, errs)
	}
}
