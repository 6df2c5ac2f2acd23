package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestHeadCacheAPI: a workspace opened with UseHeadCache starts a
// session's first commit from the head the previous workspace (process)
// saved: one PUT, no GET or LIST; later commits of the same Session go on
// from memory. A workspace without it (the HTTP server, a live Session)
// writes no cache file.
func TestHeadCacheAPI(t *testing.T) {
	ctx := context.Background()
	store, cache := t.TempDir(), t.TempDir()
	commit := func(ws *cairn.Workspace, i int) cairn.Requests {
		t.Helper()
		s, err := ws.Session("s")
		if err != nil {
			t.Fatal(err)
		}
		before := ws.Requests()
		st, err := s.Commit(ctx, cairn.JSON([]byte(fmt.Sprintf(`{"i":%d,"pad":"%0500d"}`, i, i))), cairn.CommitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st.Number != uint64(i) {
			t.Fatalf("commit %d made step %d", i, st.Number)
		}
		return ws.Requests().Sub(before)
	}
	open := func(cached bool) *cairn.Workspace {
		ws, err := cairn.Open(ctx, store)
		if err != nil {
			t.Fatal(err)
		}
		if cached {
			ws.UseHeadCache(cache)
		}
		return ws
	}

	plain := open(false)
	commit(plain, 1)
	if ents, _ := os.ReadDir(cache); len(ents) != 0 {
		t.Fatalf("a workspace without UseHeadCache wrote %d cache entries", len(ents))
	}
	commit(open(true), 2) // reads the store, saves the cache
	for i := 3; i <= 4; i++ {
		if got := commit(open(true), i); got.Put != 1 || got.Get != 1 || got.List != 0 || got.Head != 0 {
			t.Fatalf("commit %d from a fresh workspace with the cache: %+v", i, got)
		}
	}
	ws := open(true)
	for i := 5; i <= 7; i++ {
		// The first loads the cached head (one GET checks the store
		// still holds it), the others go on from memory.
		if got := commit(ws, i); got.Put != 1 || got.Get != map[bool]int64{true: 1}[i == 5] || got.List != 0 || got.Head != 0 {
			t.Fatalf("commit %d of one Session: %+v", i, got)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(cache, "heads", "*")); len(files) != 2 {
		t.Fatalf("cache holds %v, want one head file and its base, and nothing in flight", files)
	}
	// Another writer moves on; the live Session finds out from its lost
	// slot, as without the cache: a conflict.
	commit(open(false), 8)
	s, _ := ws.Session("s")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{}); !errors.Is(err, cairn.ErrConflict) {
		t.Fatalf("commit of a live Session behind the store: %v, want a conflict", err)
	}
	if got := commit(ws, 9); got.Put != 1 {
		t.Fatalf("commit after the conflict: %+v", got)
	}
}
