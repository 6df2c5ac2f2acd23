package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWritesIntoTheStoreByHostilePaths: checkout --dir, run --dir and
// export --out refused a path inside the local store only when its
// links could be followed from the path's text: a directory two levels
// below a link into the store (its parent not made yet), or a ".." after
// a link (applied to the text, where the system applies it after
// following the link), was taken for one outside the store, and
// checkout wrote the session's files among the store's own. Each is
// refused now, and nothing is written; the same paths given relative,
// from another directory than the store's, too.
func TestWritesIntoTheStoreByHostilePaths(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(root, "store")
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	work := filepath.Join(root, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	// work/in -> ../store/steps, given as written.
	if err := os.Symlink(filepath.Join("..", "store", "steps"), filepath.Join(work, "in")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	t.Chdir(work)
	before := storeFiles(t, store)
	sep := string(filepath.Separator)
	for _, c := range []struct {
		store string // --store, relative to work when not absolute
		args  []string
		path  string
	}{
		{store, []string{"checkout", "s", "--dir"}, filepath.Join(work, "in", "a", "b")},
		{store, []string{"checkout", "s", "--dir"}, filepath.Join(work, "in") + sep + ".." + sep + "new"},
		{filepath.Join("..", "store"), []string{"checkout", "s", "--dir"}, filepath.Join("in", "c", "d")},
		{store, []string{"run", "s", "--dir"}, filepath.Join(work, "in", "e", "f")},
		{filepath.Join("..", "store"), []string{"run", "s", "--dir"}, "in" + sep + ".." + sep + "new2"},
		{store, []string{"export", "--format", "openai-jsonl", "--out"}, filepath.Join(work, "in") + sep + ".." + sep + "x.jsonl"},
		{filepath.Join("..", "store"), []string{"export", "--format", "openai-jsonl", "--out"}, "in" + sep + ".." + sep + "y.jsonl"},
	} {
		args := append(append([]string{}, c.args...), c.path)
		if c.args[0] == "run" {
			args = append(args, "--", "true")
		}
		out, errs, code := cli(t, c.store, "", args...)
		if want := c.path + ": is inside the store"; code != 2 || out != "" || !strings.Contains(errs, want) {
			t.Errorf("cairn --store %s %s: exit %d, out %q, err %q; want exit 2 saying %q", c.store, strings.Join(args, " "), code, out, errs, want)
		}
	}
	if after := storeFiles(t, store); after != before {
		t.Errorf("the store was written:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// storeFiles lists the files and directories under store.
func storeFiles(t *testing.T, store string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(store, func(p string, _ os.DirEntry, err error) error {
		b.WriteString(p + "\n")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
