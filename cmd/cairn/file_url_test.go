package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStoreFileURLWithLocalhost: --store file://localhost/abs is the
// store at /abs, as RFC 8089 reads it; it used to make a store under a
// directory "localhost" wherever the command ran, and `log` of the store
// read through file:///abs then found no session.
func TestStoreFileURLWithLocalhost(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	dir := t.TempDir()
	t.Chdir(t.TempDir())
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"--store", "file://localhost" + dir, "commit", "s", "-"},
		strings.NewReader(`{"a":1}`), &out, &errb); code != 0 {
		t.Fatalf("commit: exit %d: %s", code, errb.String())
	}
	if _, err := os.Stat("localhost"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the commit made ./localhost (%v)", err)
	}
	out.Reset()
	if code := run(context.Background(), []string{"--store", "file://" + dir, "log", "s"},
		strings.NewReader(""), &out, &errb); code != 0 || !strings.Contains(out.String(), "s@1") {
		t.Fatalf("log through file://%s: exit %d, %q, %s", dir, code, out.String(), errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "steps")); err != nil {
		t.Fatalf("no store at %s: %v", dir, err)
	}
}
