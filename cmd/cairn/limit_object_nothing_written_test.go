package main

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCheckoutObjectLimitWritesNothing: a directory state whose large
// file lies in a large-file pack bigger than $CAIRN_MAX_OBJECT_BYTES
// passed checkout's check of the state (which counted the other limits
// only), then the checkout wrote the directory, the files before the
// large one and an empty large file, and stopped on the pack: "a read
// that fails on a limit writes nothing" (docs/limits.md) did not hold for
// that limit. The check now asks the size of each large-file pack the
// state reads, and such a checkout writes nothing, exit 1, naming the
// variable to raise; at exactly the pack's size it writes the state.
func TestCheckoutObjectLimitWritesNothing(t *testing.T) {
	store := t.TempDir()
	tree := t.TempDir()
	big := make([]byte, 20<<20)
	rand.New(rand.NewSource(1)).Read(big)
	writeFile(t, filepath.Join(tree, "a.txt"), []byte("a\n"))
	writeFile(t, filepath.Join(tree, "big.bin"), big)
	if _, errs, code := cli(t, store, "", "commit", "files", "--dir", tree); code != 0 {
		t.Fatalf("commit --dir: exit %d: %s", code, errs)
	}
	// The largest step object, and the smallest large-file pack.
	var steps, packs int64
	err := filepath.Walk(store, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(store, p)
		switch {
		case strings.HasPrefix(rel, "steps"+string(filepath.Separator)):
			steps = max(steps, fi.Size())
		case strings.HasPrefix(rel, "packs"+string(filepath.Separator)):
			if packs == 0 || fi.Size() < packs {
				packs = fi.Size()
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if packs <= steps {
		t.Fatalf("the large file is in no pack larger than the step object (%d, %d)", packs, steps)
	}

	out := filepath.Join(t.TempDir(), "out")
	t.Setenv("CAIRN_MAX_OBJECT_BYTES", strconv.FormatInt(packs-1, 10))
	_, errs, code := cli(t, store, "", "checkout", "files", "--dir", out)
	if code != 1 || !strings.Contains(errs, "files@1") || !strings.Contains(errs, "$CAIRN_MAX_OBJECT_BYTES") {
		t.Errorf("checkout past the limit: exit %d, %q; want exit 1 naming files@1 and $CAIRN_MAX_OBJECT_BYTES", code, errs)
	}
	if _, err := os.Lstat(out); !os.IsNotExist(err) {
		names, _ := os.ReadDir(out)
		t.Errorf("checkout past the limit wrote %s (%d entries); want nothing", out, len(names))
	}

	t.Setenv("CAIRN_MAX_OBJECT_BYTES", strconv.FormatInt(packs, 10))
	if _, errs, code := cli(t, store, "", "checkout", "files", "--dir", out); code != 0 {
		t.Fatalf("checkout at the limit: exit %d: %s", code, errs)
	}
	got, err := os.ReadFile(filepath.Join(out, "big.bin"))
	if err != nil || !bytes.Equal(got, big) {
		t.Errorf("checkout at the limit: big.bin %d bytes, %v; want the %d committed", len(got), err, len(big))
	}
}
