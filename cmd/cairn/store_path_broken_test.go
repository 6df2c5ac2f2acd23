package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStorePathThatCannotBeADirectory: a --store that is a loop of
// symbolic links, a path through a file, or a link to nothing can hold
// no store, for any command. Each was read as the store's failure or an
// empty store: "find head of s: steps/s/head: open …: too many levels of
// symbolic links" (exit 1, a store key in the words), "mark session s:
// put sessions/s: open …: not a directory", "mkdir …: file exists". It is
// a bad value (exit 2), said of the flag, and nothing is written.
func TestStorePathThatCannotBeADirectory(t *testing.T) {
	dir := t.TempDir()
	loop := filepath.Join(dir, "loop")
	if err := os.Symlink(filepath.Join(dir, "loop2"), loop); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := os.Symlink(loop, filepath.Join(dir, "loop2")); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "notes.txt")
	writeFile(t, file, []byte("hello"))
	cases := map[string]string{
		loop:                             "a loop of symbolic links, not a directory",
		filepath.Join(file, "store"):     "not a directory: a file stands on its path",
		dangling:                         "a symbolic link to " + filepath.Join(dir, "nowhere") + ", which does not exist",
		"file://" + filepath.Join(loop):  "a loop of symbolic links, not a directory",
		filepath.Join(loop, "sub", "st"): "a loop of symbolic links, not a directory",
	}
	for store, words := range cases {
		for _, args := range [][]string{{"commit", "s", "-"}, {"show", "s"}, {"log", "s"}, {"sessions"}, {"verify"}, {"gc"}, {"du"}, {"rm", "s"}} {
			_, errs, code := cli(t, store, `{"a":1}`, args...)
			want := "cairn " + args[0] + ": --store " + store + ": " + words
			if code != 2 || !strings.HasPrefix(errs, want) || strings.Count(errs, "\n") != 1 || strings.Contains(errs, "sessions/") || strings.Contains(errs, "steps/") {
				t.Errorf("cairn --store %s %s: exit %d, %q; want exit 2, one line starting %q", store, strings.Join(args, " "), code, errs, want)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "nowhere")); !os.IsNotExist(err) {
		t.Errorf("the link's target was made: %v", err)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "hello" {
		t.Errorf("the file is now %q, %v", b, err)
	}
}
