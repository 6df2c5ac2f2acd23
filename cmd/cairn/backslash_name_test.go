package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCommitDirRefusesNameCheckoutRefuses: a file named back\slash (a
// legal name on Unix) was committed, s@1 acknowledged with exit 0, and
// then every read of the step failed ("corrupt object: directory …:
// unsafe entry name"): show and checkout could not give back what commit
// had accepted. As for an unsafe symlink (docs/limits.md: a step is
// never stored that cannot be checked out), the commit is refused,
// exit 2, naming the file, and nothing is written.
func TestCommitDirRefusesNameCheckoutRefuses(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a Windows name cannot hold a backslash")
	}
	store, dir := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "sub", `back\slash`), []byte("x"))
	out, errs, code := cli(t, store, "", "commit", "s", "--dir", dir)
	if code != 2 || out != "" || !strings.Contains(errs, `sub/back\slash`) || strings.Contains(errs, "corrupt") {
		t.Fatalf("commit: exit %d, out %q, err %q; want exit 2 naming sub/back\\slash", code, out, errs)
	}
	if _, errs, code := cli(t, store, "", "log", "s"); code != 1 || !strings.Contains(errs, "has no steps") {
		t.Fatalf("a step was committed: log s: exit %d, %q", code, errs)
	}
}
