package cairn_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
)

// snapshot describes a directory tree: path -> mode and content (a
// symlink's target), to compare a checkout with its source.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out[rel] = "link " + target
			return err
		case fi.IsDir():
			out[rel] = "dir"
		default:
			data, err := os.ReadFile(p)
			out[rel] = fi.Mode().Perm().String()[3:4] + " " + string(data)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// commitAndCheck commits src through the stat cache and checks that the
// step checks out exactly as src is.
func commitAndCheck(t *testing.T, s *cairn.Session, src, cache, what string) {
	t.Helper()
	ctx := context.Background()
	settle(t)
	st, err := s.Commit(ctx, cairn.DirWithCache(src, cache), cairn.CommitOptions{})
	if err != nil {
		t.Fatalf("%s: commit: %v", what, err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if err := st.Checkout(ctx, out); err != nil {
		t.Fatalf("%s: checkout: %v", what, err)
	}
	got, want := snapshot(t, out), snapshot(t, src)
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: %s checked out as %.60q, want %.60q", what, p, got[p], w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %s checked out but is not in the directory", what, p)
		}
	}
}

func writeFile(t *testing.T, p, data string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
}

// settle waits until the filesystem's clock has moved past every change
// made so far, so that the next commit's stat cache records the files
// (stat data from the tick a commit starts in is racy and not recorded).
// It waits on file times, not on a timer.
func settle(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	stamp := func(name string) time.Time {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.ModTime()
	}
	first := stamp("first")
	for i := 0; !stamp("next").After(first); i++ {
		if i > 1e6 {
			t.Fatal("the filesystem's clock does not move")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestDirCacheSeesEveryChange commits a directory through the stat cache
// after each kind of change a cache could miss, and checks every step
// against the directory.
func TestDirCacheSeesEveryChange(t *testing.T) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ws.Session("files")
	src, cache := t.TempDir(), t.TempDir()
	long := strings.Repeat("line of text\n", 400)
	for _, name := range []string{"a.txt", "b.txt", "d/c.txt", "d/e/f.txt", "g.txt"} {
		writeFile(t, filepath.Join(src, name), name+"\n"+long, 0o644)
	}
	if err := os.Symlink("a.txt", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	commitAndCheck(t, s, src, cache, "first")
	commitAndCheck(t, s, src, cache, "unchanged")

	steps := []struct {
		what   string
		change func()
	}{
		{"edit keeping size and mtime", func() {
			p := filepath.Join(src, "a.txt")
			fi, _ := os.Stat(p)
			writeFile(t, p, "A.TXT\n"+long, 0o644) // same size
			os.Chtimes(p, fi.ModTime(), fi.ModTime())
		}},
		{"edit deep in a subtree", func() { writeFile(t, filepath.Join(src, "d/e/f.txt"), "changed", 0o644) }},
		{"rename", func() { os.Rename(filepath.Join(src, "b.txt"), filepath.Join(src, "b2.txt")) }},
		{"mode change", func() { os.Chmod(filepath.Join(src, "g.txt"), 0o755) }},
		{"symlink retargeted, same length", func() {
			os.Remove(filepath.Join(src, "link"))
			os.Symlink("g.txt", filepath.Join(src, "link"))
		}},
		{"deleted file", func() { os.Remove(filepath.Join(src, "d/c.txt")) }},
		{"file replaced by a directory", func() {
			os.Remove(filepath.Join(src, "g.txt"))
			writeFile(t, filepath.Join(src, "g.txt/inner"), "inside", 0o644)
		}},
		{"directory replaced by a file", func() {
			os.RemoveAll(filepath.Join(src, "d"))
			writeFile(t, filepath.Join(src, "d"), "now a file", 0o644)
		}},
		{"empty file", func() { writeFile(t, filepath.Join(src, "empty"), "", 0o644) }},
	}
	for _, step := range steps {
		step.change()
		commitAndCheck(t, s, src, cache, step.what)
		// Once more: the cache now holds the new records.
		commitAndCheck(t, s, src, cache, step.what+", again")
	}
	// A commit in the same tick as a change: its racy records are not
	// kept, and the next commit still sees a same-size, same-mtime edit.
	p := filepath.Join(src, "a.txt")
	fi, _ := os.Stat(p)
	writeFile(t, p, "a.txt\n"+long, 0o644)
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	if _, err := s.Commit(ctx, cairn.DirWithCache(src, cache), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, "a.tXt\n"+long, 0o644)
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	commitAndCheck(t, s, src, cache, "edit right after a commit")
}

// cacheFiles returns the cache files under cache, by name.
func cacheFiles(t *testing.T, cache string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	ents, _ := os.ReadDir(filepath.Join(cache, "dirs"))
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(cache, "dirs", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// TestDirCacheNotTrusted gives a session caches it must not believe: one
// written for another session, one for a store that was replaced by a
// new one at the same place (its refs name blobs the new store lacks),
// and truncated or garbage files. Each time a file has been changed
// without changing its size or mtime; every commit must store the
// directory as it is, and its blobs must be in the store.
func TestDirCacheNotTrusted(t *testing.T) {
	ctx := context.Background()
	src, cache := t.TempDir(), t.TempDir()
	storeDir := filepath.Join(t.TempDir(), "store")
	long := strings.Repeat("some content\n", 300)
	writeFile(t, filepath.Join(src, "x.txt"), "x\n"+long, 0o644)
	writeFile(t, filepath.Join(src, "sub/y.txt"), "y\n"+long, 0o644)
	sameStatEdit := func(content string) {
		p := filepath.Join(src, "x.txt")
		fi, _ := os.Stat(p)
		if len(content) != int(fi.Size()) {
			t.Fatal("edit changes the size")
		}
		writeFile(t, p, content, 0o644)
		os.Chtimes(p, fi.ModTime(), fi.ModTime())
	}

	ws, err := cairn.Open(ctx, storeDir)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := ws.Session("a")
	b, _ := ws.Session("b")
	commitAndCheck(t, a, src, cache, "session a")
	aFiles := cacheFiles(t, cache)
	commitAndCheck(t, b, src, cache, "session b")
	var bName string
	for name := range cacheFiles(t, cache) {
		if _, ok := aFiles[name]; !ok {
			bName = name
		}
	}
	if len(aFiles) != 1 || bName == "" {
		t.Fatalf("want one cache file per session, got %d then %q", len(aFiles), bName)
	}

	// Another session's cache in b's place.
	for _, data := range aFiles {
		os.WriteFile(filepath.Join(cache, "dirs", bName), data, 0o600)
	}
	sameStatEdit("X\n" + long)
	commitAndCheck(t, b, src, cache, "another session's cache")

	// Truncated and garbage caches.
	good := cacheFiles(t, cache)[bName]
	for what, data := range map[string][]byte{
		"truncated cache": good[:len(good)/2],
		"garbage cache":   bytes.Repeat([]byte("garbage!"), 100),
	} {
		os.WriteFile(filepath.Join(cache, "dirs", bName), data, 0o600)
		sameStatEdit(strings.ToUpper(what[:1]) + "\n" + long)
		commitAndCheck(t, b, src, cache, what)
	}
	ws.Close()

	// A new store where the old one was: same URL, session and directory,
	// so the same cache file, whose refs the new store does not hold.
	if err := os.RemoveAll(storeDir); err != nil {
		t.Fatal(err)
	}
	ws2, err := cairn.Open(ctx, storeDir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws2.Close()
	b2, _ := ws2.Session("b")
	other := t.TempDir()
	writeFile(t, filepath.Join(other, "z.txt"), "a parent step with other content "+long, 0o644)
	if _, err := b2.Commit(ctx, cairn.Dir(other), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	commitAndCheck(t, b2, src, cache, "cache of a replaced store")
	if rep, err := ws2.Verify(ctx); err != nil || len(rep.Problems) > 0 {
		t.Errorf("verify: %v %+v", err, rep)
	}
}

// TestDirCacheCommitFailsBeforeBuild: a directory commit through the stat
// cache that fails before its build (here: the head is not the one
// expected) stops the scan it began ahead of the build and leaves no
// cache file behind.
func TestDirCacheCommitFailsBeforeBuild(t *testing.T) {
	ctx := context.Background()
	src, cache := t.TempDir(), t.TempDir()
	for i := range 50 {
		writeFile(t, filepath.Join(src, fmt.Sprintf("d%d/f%d.txt", i%5, i)), strings.Repeat("x", i), 0o644)
	}
	ws, err := cairn.Open(ctx, filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	s, _ := ws.Session("s")
	before := runtime.NumGoroutine()
	_, err = s.Commit(ctx, cairn.DirWithCache(src, cache), cairn.CommitOptions{Expect: cairn.ExpectHead(3)})
	if !errors.Is(err, cairn.ErrConflict) {
		t.Fatalf("commit expecting head 3 of a new session: %v, want a conflict", err)
	}
	if files := cacheFiles(t, cache); len(files) != 0 {
		t.Fatalf("a commit that never built left cache files %v", files)
	}
	// Goroutines that end (the scan's, others of the package's earlier
	// tests) may take a moment to be counted out.
	for deadline := time.Now().Add(2 * time.Second); runtime.NumGoroutine() > before && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after the commit, %d before: the scan was not stopped", n, before)
	}
	// The next commit builds and records as usual.
	commitAndCheck(t, s, src, cache, "after the failed commit")
	if files := cacheFiles(t, cache); len(files) != 1 {
		t.Fatalf("cache files after a commit: %v", files)
	}
}
