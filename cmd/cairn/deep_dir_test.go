package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommitDirRefusesNestingReadersRefuse: a directory tree nested 600
// levels deep was committed and acknowledged, exit 0, but cairn show and
// checkout then failed ("limit exceeded: directories nested deeper than
// 528") and cairn verify called the step BAD. A JSON document nested past
// 512 levels is refused at commit; so is such a tree now (exit 2,
// nothing written), while one 512 levels deep commits and reads back.
func TestCommitDirRefusesNestingReadersRefuse(t *testing.T) {
	store := t.TempDir()
	nest := func(levels int) string {
		root := t.TempDir()
		p := filepath.Join(root, strings.Repeat("a/", levels))
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(p, "f"), []byte("x"))
		return root
	}
	out, errs, code := cli(t, store, "", "commit", "deep", "--dir", nest(600))
	if code != 2 || out != "" || !strings.Contains(errs, "more than 512 levels of directories") {
		t.Fatalf("600 levels: exit %d, out %q, err %q; want exit 2 refusing the nesting", code, out, errs)
	}
	if _, errs, code := cli(t, store, "", "log", "deep"); code != 1 || !strings.Contains(errs, "has no steps") {
		t.Fatalf("a step was committed: log deep: exit %d, %q", code, errs)
	}
	if _, errs, code := cli(t, store, "", "commit", "ok", "--dir", nest(512)); code != 0 {
		t.Fatalf("512 levels: exit %d, %q", code, errs)
	}
	if _, errs, code := cli(t, store, "", "checkout", "ok", "--dir", filepath.Join(t.TempDir(), "co")); code != 0 {
		t.Fatalf("checkout of 512 levels: exit %d, %q", code, errs)
	}
}
