package cairn_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnlog/cairn"
)

// copyTree copies the directory src to dst keeping every file's
// modification time, as cp -a, rsync -a or a filesystem snapshot does.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if err := os.WriteFile(out, b, 0o644); err != nil {
			return err
		}
		return os.Chtimes(out, fi.ModTime(), fi.ModTime())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestHeadCacheOfRestoredStore: a store put back from a copy that kept
// its files' times (cp -a, a snapshot rolled back) holds an older head
// under the same session marker. A commit through the head cache saved
// before the restore used to start from the cached head, which the store
// no longer holds: it wrote step 5 above an empty slot 3 and 4, naming
// as its parent and its blobs' home steps the restored store lacks, and
// the session's state no longer read. It must read the head from the
// store (step 2) and write step 3 above it.
func TestHeadCacheOfRestoredStore(t *testing.T) {
	ctx := context.Background()
	root, cache := t.TempDir(), t.TempDir()
	store, backup := filepath.Join(root, "store"), filepath.Join(root, "backup")
	commit := func(i int) *cairn.Step {
		t.Helper()
		ws, err := cairn.Open(ctx, store)
		if err != nil {
			t.Fatal(err)
		}
		ws.UseHeadCache(cache)
		s, err := ws.Session("s")
		if err != nil {
			t.Fatal(err)
		}
		st, err := s.Commit(ctx, cairn.JSON([]byte(fmt.Sprintf(`{"i":%d,"pad":"%0500d"}`, i, i))), cairn.CommitOptions{})
		if err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
		return st
	}
	commit(1)
	two := commit(2)
	copyTree(t, store, backup)
	commit(3)
	commit(4)
	if err := os.RemoveAll(store); err != nil {
		t.Fatal(err)
	}
	copyTree(t, backup, store)

	st := commit(5)
	if st.Number != 3 || st.Parent == nil || st.Parent.ID != two.ID.String() {
		t.Errorf("commit after the restore made step %d with parent %v, want step 3 above step 2 (%v)", st.Number, st.Parent, two.ID)
	}
	ws, err := cairn.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	head, err := ws.ReadHead(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if doc, err := head.JSON(ctx); err != nil || string(doc) != fmt.Sprintf(`{"i":5,"pad":"%0500d"}`, 5) {
		t.Errorf("head state after the restore: %.40s, %v", doc, err)
	}
	rep, err := ws.Verify(ctx)
	if err != nil || len(rep.Problems) != 0 {
		t.Errorf("verify after the restore: %+v, %v", rep, err)
	}
}
