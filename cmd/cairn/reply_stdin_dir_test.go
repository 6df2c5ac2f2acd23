package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
)

// TestReplyStdinDirectory: cairn reply --input - whose stdin is a
// directory is bad input (exit 2), said as a commit says its stdin. It
// was "read stdin: read /dev/stdin: is a directory", exit 1, as though
// the store had failed.
func TestReplyStdinDirectory(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{}`, "commit", "h", "-", "--status", "awaiting_input", "--record", `{"question":"ok?"}`); code != 0 {
		t.Fatal(errs)
	}
	d, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"--store", store, "reply", "h", "--input", "-"}, d, io.Discard, &stderr)
	if want := "cairn reply: --input - (stdin): is a directory\n"; code != 2 || stderr.String() != want {
		t.Errorf("reply --input - < directory: exit %d, %q; want exit 2, %q", code, stderr.String(), want)
	}
	if out, _, _ := cli(t, store, "", "inbox"); !strings.Contains(out, "h@1") {
		t.Errorf("the question no longer waits: inbox says %q", out)
	}
}
