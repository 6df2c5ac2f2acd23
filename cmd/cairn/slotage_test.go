package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn/manifest"
)

// ageStore moves the modification time of every data object (steps and
// packs) of the local store at dir back past manifest.SlotFenceAge, as if
// they had been written that long ago: gc deletes step objects only once
// they are that old, whatever --grace says. Session markers keep their
// times, which head caches compare.
func ageStore(t *testing.T, dir string) {
	t.Helper()
	for _, sub := range []string{"steps", "packs"} {
		ageFiles(t, filepath.Join(dir, sub))
	}
}

// ageFiles moves the modification time of every file under dir (if it
// exists) back past manifest.SlotFenceAge.
func ageFiles(t *testing.T, dir string) {
	t.Helper()
	setFilesTime(t, dir, time.Now().Add(-manifest.SlotFenceAge-time.Minute))
}

// setFilesTime sets the modification time of every file under dir (if
// it exists) to then.
func setFilesTime(t *testing.T, dir string, then time.Time) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == dir {
			return nil
		}
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(p, then, then)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestHeadCacheStaleAfterGC: machine A's head cache holds step 2; B takes
// the session to step 40, prunes it to 3 steps, and gc deletes the pruned
// steps' objects (old enough: manifest.SlotFenceAge). A's cache, saved
// longer ago than manifest.HeadTrust, is checked against the store's head
// before A commits, so A's commit lands above B's head, never in the
// emptied slot 3 below the base where no reader would see it.
func TestHeadCacheStaleAfterGC(t *testing.T) {
	bin, store := cairnBinary(t), t.TempDir()
	a, b := localMachine(t, bin, store), localMachine(t, bin, store)
	a.commit("s", docN(1))
	a.commit("s", docN(2))
	for i := 3; i <= 40; i++ { // past a compaction, which frees steps 1..32 for a prune
		b.commit("s", docN(i))
	}
	b.must("", "prune", "s", "--keep-last", "3")
	ageStore(t, store)
	home := strings.TrimPrefix(a.env[slices.IndexFunc(a.env, func(kv string) bool { return strings.HasPrefix(kv, "HOME=") })], "HOME=")
	ageFiles(t, home)
	for range 2 {
		b.must("", "gc", "--grace", "0s")
	}
	if _, err := os.Stat(filepath.Join(store, "steps", "s", "00000000000000000003")); !os.IsNotExist(err) {
		t.Fatalf("gc kept s@3 (stat: %v); the test needs its slot empty", err)
	}
	if r := a.commit("s", docN(41)); r.Step != 41 {
		t.Fatalf("A committed step %d from a stale cache; want 41, above B's head", r.Step)
	}
	a.checkHead("s", 41, docN(41))
	if _, err := os.Stat(filepath.Join(store, "steps", "s", "00000000000000000003")); !os.IsNotExist(err) {
		t.Fatalf("A's commit filled the emptied slot 3 (stat: %v)", err)
	}
}

// TestHeadCacheFromTheFuture is TestHeadCacheStaleAfterGC with A's head
// cache saved while A's clock ran two hours ahead, since put right: the
// cache's time is in the future, and a head held "for a negative time"
// was trusted. Its commit filled the slot gc had emptied, below the
// base. A cache saved in the future is checked like an old one.
func TestHeadCacheFromTheFuture(t *testing.T) {
	bin, store := cairnBinary(t), t.TempDir()
	a, b := localMachine(t, bin, store), localMachine(t, bin, store)
	a.commit("s", docN(1))
	a.commit("s", docN(2))
	for i := 3; i <= 40; i++ {
		b.commit("s", docN(i))
	}
	b.must("", "prune", "s", "--keep-last", "3")
	ageStore(t, store)
	home := strings.TrimPrefix(a.env[slices.IndexFunc(a.env, func(kv string) bool { return strings.HasPrefix(kv, "HOME=") })], "HOME=")
	setFilesTime(t, home, time.Now().Add(2*time.Hour))
	for range 2 {
		b.must("", "gc", "--grace", "0s")
	}
	if _, err := os.Stat(filepath.Join(store, "steps", "s", "00000000000000000003")); !os.IsNotExist(err) {
		t.Fatalf("gc kept s@3 (stat: %v); the test needs its slot empty", err)
	}
	if r := a.commit("s", docN(41)); r.Step != 41 {
		t.Fatalf("A committed step %d from a cache saved in the future; want 41, above B's head", r.Step)
	}
	a.checkHead("s", 41, docN(41))
}
