package cairn_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/fixture"
)

// checkRealCommitted checks that st holds real's files (a.txt, sub) and
// not the current directory's (link, real).
func checkRealCommitted(t *testing.T, st *cairn.Step, what string) {
	t.Helper()
	files, err := st.Files(context.Background())
	if err != nil {
		t.Fatalf("%s: files: %v", what, err)
	}
	got := map[string]bool{}
	for _, f := range files {
		got[f.Path] = true
	}
	if !got["a.txt"] || !got["sub"] || got["link"] || got["real"] {
		t.Errorf("%s: files %v, want real's (a.txt, sub)", what, files)
	}
}

// TestDirDotDotAfterLink: cairn.Dir("link/.."), with link a symbolic
// link to real/sub, failed ("changed type while being read", or a file
// of real not found) or committed the current directory: the kernel
// read real, and the names read were joined onto the cleaned text ".".
// It commits real's files, as the kernel takes the path; so does
// DirWithCache, whose stat cache is the one of real however it is
// spelled.
func TestDirDotDotAfterLink(t *testing.T) {
	ctx := context.Background()
	store := filepath.Join(t.TempDir(), "store")
	cache := t.TempDir()
	fixture.DotDotLinkTree(t)
	ws, err := cairn.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	s, _ := ws.Session("s")
	st, err := s.Commit(ctx, cairn.Dir("link/.."), cairn.CommitOptions{})
	if err != nil {
		t.Fatalf("commit Dir(link/..): %v", err)
	}
	checkRealCommitted(t, st, "Dir(link/..)")

	c, _ := ws.Session("c")
	settle(t)
	if _, err := c.Commit(ctx, cairn.DirWithCache("real", cache), cairn.CommitOptions{}); err != nil {
		t.Fatalf("commit DirWithCache(real): %v", err)
	}
	if err := os.WriteFile(filepath.Join("real", "a.txt"), []byte("changed between the commits\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	settle(t)
	st, err = c.Commit(ctx, cairn.DirWithCache("link/..", cache), cairn.CommitOptions{})
	if err != nil {
		t.Fatalf("commit DirWithCache(link/..): %v", err)
	}
	checkRealCommitted(t, st, "DirWithCache(link/..)")
	out := filepath.Join(t.TempDir(), "out")
	if err := st.Checkout(ctx, out); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "a.txt")); string(b) != "changed between the commits\n" {
		t.Errorf("a.txt committed through link/.. after a change: %q", b)
	}
	if files, _ := filepath.Glob(filepath.Join(cache, "dirs", "*.dircache")); len(files) != 1 {
		t.Errorf("stat caches after commits of one directory by two spellings: %d, want one", len(files))
	}
}

// TestCheckoutDotDotAfterLink: Step.Checkout(ctx, "link/../out") made
// real/out (the kernel's mkdir) and then wrote the files to ./out, the
// cleaned text. It writes them into real/out, where the kernel takes
// the path, for a directory state and a JSON one.
func TestCheckoutDotDotAfterLink(t *testing.T) {
	ctx := context.Background()
	store := filepath.Join(t.TempDir(), "store")
	root := fixture.DotDotLinkTree(t)
	ws, err := cairn.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	s, _ := ws.Session("s")
	st, err := s.Commit(ctx, cairn.Dir("real"), cairn.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Checkout(ctx, "link/../out"); err != nil {
		t.Fatalf("checkout into link/../out: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "real", "out", "a.txt")); string(b) != "hi\n" {
		t.Errorf("real/out/a.txt after checkout into link/../out: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(root, "out")); err == nil {
		t.Error("checkout into link/../out wrote ./out")
	}
	// Into link/.. itself: real, which is not empty, is refused.
	if err := st.Checkout(ctx, "link/.."); err == nil {
		t.Error("checkout into link/.. (real, not empty) succeeded")
	}

	j, _ := ws.Session("j")
	jst, err := j.Commit(ctx, cairn.JSON([]byte(`{"a":1}`)), cairn.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := jst.Checkout(ctx, "link/../json"); err != nil {
		t.Fatalf("checkout of a JSON state into link/../json: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "real", "json", "state.json")); string(b) != "{\"a\":1}\n" {
		t.Errorf("real/json/state.json: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(root, "json")); err == nil {
		t.Error("checkout into link/../json wrote ./json")
	}
}

// TestCheckoutEmptyDirSaysSo: Step.Checkout(ctx, "") failed with the
// system's "mkdir : no such file or directory"; it is refused as invalid,
// in words, before anything is written.
func TestCheckoutEmptyDirSaysSo(t *testing.T) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	s, _ := ws.Session("s")
	st, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Checkout(ctx, "")
	if !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), "no directory given") {
		t.Errorf("Checkout into \"\": %v, want ErrInvalid saying no directory was given", err)
	}
}
