package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFileWhereStoreDirectoryBelongs: a file where a directory of a
// local store belongs, on the way to an object a command writes (steps/s
// for a commit to s, sessions for a fork's new session), made the
// command say the store key and the system's words on the file's path
// ("commit s@1: write session s, step 1: put steps/s/…01: open
// …/steps/s: not a directory"). A reader takes such a file for another
// key (nothing of the session is there), but a writer needs the
// directory: it is the store's damage, said as for a link or a pipe
// there, in words (what stands where, to remove it), exit 1, and nothing
// is written. A file where the store's own directory of temporary files
// (.tmp) belongs is named so, not as "an object of unknown kind", and
// what went undone is the object the command wrote.
func TestFileWhereStoreDirectoryBelongs(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	for _, c := range []struct {
		name  string
		file  string // relative to the store: made a file
		args  []string
		stdin string
		want  string
	}{
		// Met first by the commit's head discovery, whose listing of the
		// session's steps fails on it (it is no session without steps).
		{"steps of the session", "steps/s", []string{"commit", "s", "-"}, `{"n":3}`,
			" holds a file where a directory holding the steps of session s belongs: remove it to repair; the step was not written"},
		{"sessions", "sessions", []string{"fork", "t@1", "u"}, "",
			" holds a file where a directory holding the marker of session u belongs: remove it to repair"},
		// The store's own directory of temporary files, through which a
		// fork (and rm, prune) writes: it was named "an object of
		// unknown kind", twice, and before that by the key put.
		{"temporary files", ".tmp", []string{"fork", "t@1", "u"}, "",
			" holds a file where the directory .tmp the store keeps for itself belongs: remove it to repair; the marker of session u was not written"},
		{"temporary files, rm", ".tmp", []string{"rm", "t"}, "",
			" holds a file where the directory .tmp the store keeps for itself belongs: remove it to repair; the base marker of session t was not written"},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := filepath.Join(t.TempDir(), "store")
			if _, errs, code := cli(t, store, `{"n":1}`, "commit", "t", "-"); code != 0 {
				t.Fatalf("commit: %s", errs)
			}
			p := filepath.Join(store, filepath.FromSlash(c.file))
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			writeFile(t, p, []byte("x"))
			out, errs, code := cli(t, store, c.stdin, c.args...)
			want := "cairn " + c.args[0] + ": the store " + store + c.want
			if code != 1 || out != "" || !strings.HasPrefix(errs, want) || storeWords.MatchString(errs) ||
				strings.Contains(errs, "not a directory") || strings.Count(errs, "\n") != 1 {
				t.Errorf("%s: exit %d, %q %q; want exit 1 and %q…, no store key", strings.Join(c.args, " "), code, out, errs, want)
			}
			if b, err := os.ReadFile(p); err != nil || string(b) != "x" {
				t.Errorf("the file at %s changed: %q %v", c.file, b, err)
			}
		})
	}
}
