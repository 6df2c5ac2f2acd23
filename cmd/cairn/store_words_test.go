package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStoreThatIsAFile: a --store or $CAIRN_STORE naming a file is a bad
// value (exit 2) said as such for every command, the file untouched. It
// was "open fs store F: not a directory", exit 1.
func TestStoreThatIsAFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	writeFile(t, file, []byte("hello"))
	const rest = ": not a directory (a local store is a directory; s3:// and minio:// URLs name object stores)\n"
	for _, args := range [][]string{{"commit", "s", "-"}, {"show", "s"}, {"sessions"}, {"verify"}, {"gc"}} {
		_, errs, code := cli(t, file, `{}`, args...)
		if want := "cairn " + args[0] + ": --store " + file + rest; code != 2 || errs != want {
			t.Errorf("cairn --store FILE %s: exit %d, %q; want 2, %q", args[0], code, errs, want)
		}
	}
	t.Setenv("CAIRN_STORE", file)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"show", "s"}, strings.NewReader(""), &out, &errb)
	if want := "cairn show: $CAIRN_STORE " + file + rest; code != 2 || errb.String() != want {
		t.Errorf("CAIRN_STORE=FILE cairn show: exit %d, %q; want 2, %q", code, errb.String(), want)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "hello" {
		t.Errorf("the file is now %q, %v", b, err)
	}
}
