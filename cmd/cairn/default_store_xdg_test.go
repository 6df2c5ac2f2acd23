package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runDefault runs one cairn invocation on the default store (no --store).
func runDefault(stdin string, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// TestDefaultStoreUnderAFile: $XDG_DATA_HOME naming a file puts the
// default store where no directory can be. A commit said "mark session
// s: put sessions/s: open …/cairn: not a directory" (exit 1, a store
// key), and reading commands found an empty store. Every command now
// says it of the default store (exit 2), and nothing is written.
func TestDefaultStoreUnderAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "data")
	writeFile(t, file, []byte("hello"))
	t.Setenv("CAIRN_STORE", "")
	t.Setenv("XDG_DATA_HOME", file)
	t.Setenv("CAIRN_CACHE_DIR", "off")
	want := "the default store " + filepath.Join(file, "cairn") + ": not a directory: a file stands on its path"
	for _, args := range [][]string{{"commit", "s", "-"}, {"sessions"}, {"log", "s"}, {"verify"}} {
		out, errs, code := runDefault(`{"a":1}`, args...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, "cairn "+args[0]+": "+want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("cairn %s: exit %d, %q %q; want exit 2, %q…", strings.Join(args, " "), code, out, errs, want)
		}
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "hello" {
		t.Errorf("the file is now %q, %v", b, err)
	}
}

// TestDefaultStoreIgnoresRelativeXDGDataHome: a relative $XDG_DATA_HOME
// is ignored, as the XDG base directory specification says. It put the
// default store under whatever directory a command ran in: a step
// committed in one directory was not found from another ("session has
// no steps").
func TestDefaultStoreIgnoresRelativeXDGDataHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CAIRN_STORE", "")
	t.Setenv("XDG_DATA_HOME", "data")
	t.Setenv("CAIRN_CACHE_DIR", "off")
	t.Chdir(t.TempDir())
	if _, errs, code := runDefault(`{"a":1}`, "commit", "s", "-"); code != 0 {
		t.Fatalf("commit: exit %d, %s", code, errs)
	}
	t.Chdir(t.TempDir())
	if out, errs, code := runDefault("", "show", "s"); code != 0 || out != `{"a":1}`+"\n" {
		t.Errorf("show from another directory: exit %d, %q %q; want the step committed", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(home, ".local", "share", "cairn")); err != nil {
		t.Errorf("the store is not ~/.local/share/cairn: %v", err)
	}
}
