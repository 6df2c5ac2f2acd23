package cairn_test

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/workload"
	"github.com/cairnlog/cairn/manifest"
)

// TestCheckoutFailingPartWayLeavesNothing: a checkout that fails once it
// has begun to write (here a large file's pack found damaged; a
// cancelled checkout or a full disk alike) removes what it wrote. It left
// the files before the damage whole and the damaged one truncated, under
// its own name, in a directory a second checkout then refused as not
// empty: a state that looked checked out but was not the step's.
func TestCheckoutFailingPartWayLeavesNothing(t *testing.T) {
	ctx := context.Background()
	store := t.TempDir()
	state := t.TempDir()
	writeTestFile(t, filepath.Join(state, "a.txt"), []byte("written first\n"))
	if err := os.Mkdir(filepath.Join(state, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(state, "b", "c.txt"), []byte("in a directory\n"))
	big, err := os.Create(filepath.Join(state, "z.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(big, workload.Large(7, manifest.SpillThreshold+4096, false)); err != nil {
		t.Fatal(err)
	}
	if err := big.Close(); err != nil {
		t.Fatal(err)
	}
	ws, err := cairn.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if _, err := mustSession(t, ws, "s").Commit(ctx, cairn.Dir(state), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	// Damage the end of every spill pack: its size stays, so the
	// check before writing passes, and its blobs fail when read.
	damaged := 0
	err = filepath.WalkDir(filepath.Join(store, "packs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b[len(b)/2] ^= 0xff
		b[len(b)-1] ^= 0xff
		damaged++
		return os.WriteFile(p, b, 0o644)
	})
	if err != nil || damaged == 0 {
		t.Fatalf("damaged %d spill packs: %v", damaged, err)
	}

	fresh, err := cairn.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	st, err := mustSession(t, fresh, "s").Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	absent := filepath.Join(parent, "new", "out")
	if err := st.Checkout(ctx, absent); err == nil {
		t.Fatal("checkout of a damaged state succeeded")
	}
	if des, err := os.ReadDir(parent); err != nil || len(des) != 0 {
		t.Errorf("a failed checkout into an absent directory left %v (%v) in its parent", names(des), err)
	}
	empty := t.TempDir()
	if err := st.Checkout(ctx, empty); err == nil {
		t.Fatal("checkout of a damaged state succeeded")
	}
	if des, err := os.ReadDir(empty); err != nil || len(des) != 0 {
		t.Errorf("a failed checkout into an empty directory left %v (%v) in it", names(des), err)
	}
}

func names(des []fs.DirEntry) []string {
	var out []string
	for _, d := range des {
		out = append(out, d.Name())
	}
	return out
}

func writeTestFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
