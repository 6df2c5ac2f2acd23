package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// nameBytesDir returns a directory holding files whose names differ only
// in bytes that are not UTF-8 ("a\xff" and "a\xfe"), and a file "ok",
// skipping where no such name can be made. Linux file systems take any
// byte string but / and NUL; macOS and Windows refuse names that are not
// Unicode. CI runs Linux, where the test must run.
func nameBytesDir(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skipf("%s refuses file names that are not UTF-8; CI runs this test on Linux", runtime.GOOS)
	}
	dir := t.TempDir()
	for _, n := range []string{"a\xff", "a\xfe", "ok"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal(err)
			}
			t.Skipf("this file system refuses a name that is not UTF-8: %v", err)
		}
	}
	return dir
}

// namesOf returns the exact names a JSON listing gives (path_bytes
// where present, else path), checking that path_bytes comes exactly with
// the names that are not UTF-8, and path is always text.
func namesOf(t *testing.T, what string, entries []map[string]any) []string {
	t.Helper()
	var names []string
	for _, e := range entries {
		p, _ := e["path"].(string)
		if !utf8.ValidString(p) {
			t.Errorf("%s: path %q is not text", what, p)
		}
		name := p
		if b, ok := e["path_bytes"]; ok {
			raw, err := base64.StdEncoding.DecodeString(b.(string))
			if err != nil {
				t.Fatalf("%s: path_bytes %v: %v", what, b, err)
			}
			if utf8.Valid(raw) {
				t.Errorf("%s: path_bytes given for %q, which is UTF-8", what, raw)
			}
			if strings.ToValidUTF8(string(raw), "\ufffd") != p {
				t.Errorf("%s: path %q is not path_bytes %q as text", what, p, raw)
			}
			name = string(raw)
		}
		names = append(names, name)
	}
	return names
}

// A directory state may hold any name the file system allows, and
// encoding/json writes bytes that are not UTF-8 as U+FFFD: show --json
// and diff --json printed "a\ufffd" for both a\xff and a\xfe, so a
// program reading them could neither tell the two apart nor name either
// file (replay --json's changes, too). path stays the text to show; path_bytes, given only for a name
// that is not UTF-8, holds its exact bytes (base64).
func TestShowDiffJSONNamesNotUTF8(t *testing.T) {
	dir := nameBytesDir(t)
	store := t.TempDir()
	empty := t.TempDir()
	if _, errs, code := cli(t, store, "", "commit", "s", "--dir", empty); code != 0 {
		t.Fatalf("commit: exit %d: %s", code, errs)
	}
	if _, errs, code := cli(t, store, "", "commit", "s", "--dir", dir); code != 0 {
		t.Fatalf("commit: exit %d: %s", code, errs)
	}
	want := "a\xfe a\xff ok"

	out, errs, code := cli(t, store, "", "show", "s", "--json")
	if code != 0 {
		t.Fatalf("show --json: exit %d: %s", code, errs)
	}
	var files []map[string]any
	if err := json.Unmarshal([]byte(out), &files); err != nil {
		t.Fatalf("show --json: %v: %s", err, out)
	}
	if got := strings.Join(namesOf(t, "show --json", files), " "); got != want {
		t.Errorf("show --json names %q, want %q", got, want)
	}

	out, errs, code = cli(t, store, "", "diff", "s@1", "s@2", "--json")
	if code != 0 {
		t.Fatalf("diff --json: exit %d: %s", code, errs)
	}
	var changes []map[string]any
	if err := json.Unmarshal([]byte(out), &changes); err != nil {
		t.Fatalf("diff --json: %v: %s", err, out)
	}
	if got := strings.Join(namesOf(t, "diff --json", changes), " "); got != want {
		t.Errorf("diff --json names %q, want %q", got, want)
	}

	// replay --json lists the same changes, the same way.
	out, errs, code = cli(t, store, "", "replay", "s", "--json")
	if code != 0 {
		t.Fatalf("replay --json: exit %d: %s", code, errs)
	}
	var line struct {
		Changes []map[string]any `json:"changes"`
	}
	last := strings.Split(strings.TrimSpace(out), "\n")
	if err := json.Unmarshal([]byte(last[len(last)-1]), &line); err != nil {
		t.Fatalf("replay --json: %v: %s", err, out)
	}
	if got := strings.Join(namesOf(t, "replay --json", line.Changes), " "); got != want {
		t.Errorf("replay --json names %q, want %q", got, want)
	}
}
