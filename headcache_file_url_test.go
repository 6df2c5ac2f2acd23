package cairn_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestHeadCacheRelativeFileURL: file://store is a directory relative to
// the working directory, so the same URL in two directories names two
// stores. The head cache used to key both by the URL as written: a
// commit in one directory saved its head where the other's next commit
// looked, and that commit then found the head was not its store's and
// read the store (a LIST and the layout's GETs) instead of one PUT and
// one GET. Each directory's store must keep its own cache.
func TestHeadCacheRelativeFileURL(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	dirs := []string{t.TempDir(), t.TempDir()}
	commit := func(dir string, i int) cairn.Requests {
		t.Helper()
		t.Chdir(dir)
		ws, err := cairn.Open(ctx, "file://store")
		if err != nil {
			t.Fatal(err)
		}
		ws.UseHeadCache(cache)
		s, err := ws.Session("s")
		if err != nil {
			t.Fatal(err)
		}
		before := ws.Requests()
		if _, err := s.Commit(ctx, cairn.JSON([]byte(fmt.Sprintf(`{"dir":%q,"i":%d}`, filepath.Base(dir), i))), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
		return ws.Requests().Sub(before)
	}
	commit(dirs[0], 1)
	commit(dirs[1], 1)
	for i := 2; i <= 3; i++ {
		for _, dir := range dirs {
			if got := commit(dir, i); got.Put != 1 || got.Get != 1 || got.List != 0 {
				t.Errorf("commit %d in %s through its head cache: %+v, want 1 PUT, 1 GET, no LIST", i, dir, got)
			}
		}
	}
	all, _ := filepath.Glob(filepath.Join(cache, "heads", "*.head"))
	bases, _ := filepath.Glob(filepath.Join(cache, "heads", "*.base.head"))
	if len(all)-len(bases) != 2 {
		t.Errorf("head cache files: %v, want one (and its base) for each directory's store", all)
	}
}
