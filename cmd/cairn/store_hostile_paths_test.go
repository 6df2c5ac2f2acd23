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

// TestRunWorksWhereItsDirCheckLooked: cairn run checked --dir where the
// system takes the path (a ".." after a link applied to the link's
// target), but worked where its text, cleaned, points: from a directory
// inside the store, --dir LINK/../x with LINK naming a directory outside
// it passed the check and the run wrote its state into the store. The
// run works in the directory the check looked at.
func TestRunWorksWhereItsDirCheckLooked(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(root, "store")
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	outside := filepath.Join(root, "outside", "deep")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	inStore := filepath.Join(store, "steps")
	if err := os.Symlink(outside, filepath.Join(inStore, "link")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	t.Chdir(inStore)
	dir := "link" + string(filepath.Separator) + ".." + string(filepath.Separator) + "x"
	if _, errs, code := cli(t, store, "", "run", "s", "--dir", dir, "--", "sh", "-c", `test -f "$CAIRN_STATE_DIR/state.json"`); code != 0 {
		t.Fatalf("run --dir %s: exit %d: %s", dir, code, errs)
	}
	if _, err := os.Lstat(filepath.Join(inStore, "x")); err == nil {
		t.Errorf("run --dir %s from %s wrote %s, inside the store", dir, inStore, filepath.Join(inStore, "x"))
	}
	if _, err := os.Stat(filepath.Join(root, "outside", "x")); err != nil {
		t.Errorf("run --dir %s did not work in %s: %v", dir, filepath.Join(root, "outside", "x"), err)
	}
}

// TestCommitDirHoldingTheStoreAfterALink: commit --dir LINK/.. reads the
// directory above LINK's target, as the system takes the path, but the
// check for a directory holding the store cleaned the text first (LINK/..
// is the current directory) and let the commit carry the store whole
// when the directory above the target held it.
func TestCommitDirHoldingTheStoreAfterALink(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(root, "project")
	store := filepath.Join(project, "store")
	for _, d := range []string{filepath.Join(project, "src"), filepath.Join(root, "work")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "other", "-"); code != 0 {
		t.Fatal(errs)
	}
	if err := os.Symlink(filepath.Join(project, "src"), filepath.Join(root, "work", "src")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	t.Chdir(filepath.Join(root, "work"))
	dir := "src" + string(filepath.Separator) + ".."
	out, errs, code := cli(t, store, "", "commit", "s", "--dir", dir)
	if code != 2 || out != "" || !strings.Contains(errs, "holds the store") {
		t.Errorf("commit --dir %s (%s, which holds the store): exit %d, stdout %q, stderr %q; want exit 2 saying it holds the store", dir, project, code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(store, "steps", "s")); err == nil {
		t.Error("the refused commit wrote session s")
	}
}
