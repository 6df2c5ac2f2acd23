package cairn_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
)

// TestHeadCacheSavedLate: a commit acknowledged step 5 and was paused
// before it saved its head cache, long enough for others to take the
// session to step 40, prune it, and gc to delete slot 6. The cache file,
// saved on its return, is a minute old when the next commit from this
// machine reads it: its head, confirmed when step 5 was acknowledged,
// was trusted as a minute old, and the commit filled slot 6 again below
// the base. A cached head counts from its step's time if that is older.
func TestHeadCacheSavedLate(t *testing.T) {
	ctx := context.Background()
	store, cache := t.TempDir(), t.TempDir()
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
	commit := func(ws *cairn.Workspace, i int) (*cairn.Step, error) {
		s, err := ws.Session("s")
		if err != nil {
			t.Fatal(err)
		}
		return s.Commit(ctx, cairn.JSON([]byte(fmt.Sprintf(`{"i":%d}`, i))), cairn.CommitOptions{})
	}
	for i := 1; i <= 5; i++ {
		if _, err := commit(open(true), i); err != nil {
			t.Fatal(err)
		}
	}
	other := open(false)
	for i := 6; i <= 40; i++ { // past a compaction, which frees the early steps for a prune
		if _, err := commit(other, i); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := other.Prune(ctx, "s", 3); err != nil {
		t.Fatal(err)
	}
	mustGC(t, other, cairn.GCOptions{Grace: 0, Now: slotsAged})
	mustGC(t, other, cairn.GCOptions{Grace: 0, Now: slotsAged})
	if _, err := os.Stat(filepath.Join(store, "steps", "s", "00000000000000000006")); !os.IsNotExist(err) {
		t.Fatalf("gc kept s@6 (stat: %v); the test needs its slot empty", err)
	}
	// The cache saved a minute before the next commit, by this machine's
	// clock (slotsAged), whose commit of step 5 was acknowledged long before.
	saved := slotsAged.Add(-time.Minute)
	err := filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(p, saved, saved)
	})
	if err != nil {
		t.Fatal(err)
	}
	ws := open(true)
	cairn.SetClock(ws, func() time.Time { return slotsAged })
	st, err := commit(ws, 41)
	if err != nil || st.Number != 41 {
		t.Fatalf("commit from the late-saved cache: %v %v; want step 41, above the head", st, err)
	}
	if _, err := os.Stat(filepath.Join(store, "steps", "s", "00000000000000000006")); !os.IsNotExist(err) {
		t.Fatalf("the commit filled the emptied slot 6 (stat: %v)", err)
	}
}
