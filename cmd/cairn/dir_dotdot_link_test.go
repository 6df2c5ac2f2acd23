package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/fixture"
)

// TestCommitDirDotDotAfterLink: commit --dir link/.., with link a
// symbolic link to real/sub, failed ("changed type while being read",
// or a file of real not found): the kernel read real, and the names
// read were joined onto the cleaned text "." (the current directory).
// It commits real's files, as the kernel takes the path.
func TestCommitDirDotDotAfterLink(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	store := t.TempDir()
	fixture.DotDotLinkTree(t)
	if _, errs, code := cli(t, store, "", "commit", "s", "--dir", "link/.."); code != 0 {
		t.Fatalf("commit s --dir link/..: exit %d: %s", code, errs)
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, errs, code := cli(t, store, "", "checkout", "s", "--dir", out); code != 0 {
		t.Fatalf("checkout: exit %d: %s", code, errs)
	}
	if b, err := os.ReadFile(filepath.Join(out, "a.txt")); string(b) != "hi\n" {
		t.Errorf("a.txt of the step committed from link/..: %q, %v; want real's", b, err)
	}
	if fi, err := os.Stat(filepath.Join(out, "sub")); err != nil || !fi.IsDir() {
		t.Errorf("sub of the step committed from link/..: %v, want real's directory", err)
	}
	if _, err := os.Stat(filepath.Join(out, "link")); err == nil {
		t.Error("the step committed from link/.. holds link: the current directory was committed, not real")
	}
}

// TestCheckoutDirDotDotAfterLink: checkout --dir link/../co made real/co
// (the kernel's mkdir) and then wrote the files to ./co, the cleaned
// text, which did not exist. It writes them into real/co.
func TestCheckoutDirDotDotAfterLink(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	store := t.TempDir()
	root := fixture.DotDotLinkTree(t)
	if _, errs, code := cli(t, store, "", "commit", "s", "--dir", "real"); code != 0 {
		t.Fatalf("commit: exit %d: %s", code, errs)
	}
	if _, errs, code := cli(t, store, "", "checkout", "s", "--dir", "link/../co"); code != 0 {
		t.Fatalf("checkout s --dir link/../co: exit %d: %s", code, errs)
	}
	if b, err := os.ReadFile(filepath.Join(root, "real", "co", "a.txt")); string(b) != "hi\n" {
		t.Errorf("real/co/a.txt after checkout --dir link/../co: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(root, "co")); err == nil {
		t.Error("checkout --dir link/../co wrote ./co")
	}
	// Into link/.. itself: real, which is not empty, is refused.
	if _, errs, code := cli(t, store, "", "checkout", "s", "--dir", "link/.."); code != 2 {
		t.Errorf("checkout into link/.. (real, not empty): exit %d, want 2: %s", code, errs)
	}
}

// TestStatCacheOneDirTwoSpellings: real and link/.. are one directory,
// so they have one stat cache, and a file changed between a commit
// through one spelling and a commit through the other is committed.
func TestStatCacheOneDirTwoSpellings(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	store := t.TempDir()
	fixture.DotDotLinkTree(t)
	if _, errs, code := cli(t, store, "", "commit", "s", "--dir", "real"); code != 0 {
		t.Fatalf("commit --dir real: exit %d: %s", code, errs)
	}
	if err := os.WriteFile(filepath.Join("real", "a.txt"), []byte("changed between the two commits\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, "", "commit", "s", "--dir", "link/.."); code != 0 {
		t.Fatalf("commit --dir link/..: exit %d: %s", code, errs)
	}
	files, _ := filepath.Glob(filepath.Join(cache, "cairn", "dirs", "*.dircache"))
	if len(files) != 1 {
		t.Errorf("stat caches after commits of one directory by two spellings: %d, want one", len(files))
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, errs, code := cli(t, store, "", "checkout", "s@2", "--dir", out); code != 0 {
		t.Fatalf("checkout: exit %d: %s", code, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "a.txt")); string(b) != "changed between the two commits\n" {
		t.Errorf("s@2's a.txt: %q, want the change made between the commits", b)
	}
	// And back: changed again, committed through real.
	if err := os.WriteFile(filepath.Join("real", "a.txt"), []byte("third\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, "", "commit", "s", "--dir", "real"); code != 0 {
		t.Fatalf("commit --dir real again: exit %d: %s", code, errs)
	}
	out3 := filepath.Join(t.TempDir(), "out")
	if _, errs, code := cli(t, store, "", "checkout", "s@3", "--dir", out3); code != 0 {
		t.Fatalf("checkout: exit %d: %s", code, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(out3, "a.txt")); string(b) != "third\n" {
		t.Errorf("s@3's a.txt: %q, want third", b)
	}
}

// TestCommitDirSymlinkToDir: --dir naming a symbolic link to a
// directory commits the directory it points to (its files, not the
// link), as it always has; checkout --dir through such a link writes
// into the directory it points to.
func TestCommitDirSymlinkToDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	store := t.TempDir()
	root := fixture.DotDotLinkTree(t)
	if err := os.Symlink("real", "rl"); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, "", "commit", "s", "--dir", "rl"); code != 0 {
		t.Fatalf("commit --dir rl: exit %d: %s", code, errs)
	}
	out, _, code := cli(t, store, "", "show", "s")
	if code != 0 || !strings.Contains(out, "a.txt") || !strings.Contains(out, "sub") {
		t.Errorf("show of the step committed through a link to real: exit %d\n%s", code, out)
	}
	if err := os.Mkdir("empty", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("empty", "el"); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, "", "checkout", "s", "--dir", "el"); code != 0 {
		t.Fatalf("checkout --dir el: exit %d: %s", code, errs)
	}
	if b, err := os.ReadFile(filepath.Join(root, "empty", "a.txt")); string(b) != "hi\n" {
		t.Errorf("empty/a.txt after checkout through a link to it: %q, %v", b, err)
	}
	if fi, err := os.Lstat("el"); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link checked out through is no longer a link: %v", err)
	}
}
