package cachedir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPrune checks the bound on a cache directory: the least recently
// written cache files go first until the rest fit, temporary files older
// than StaleTemp go, fresh ones stay (a save may be in progress), and
// what Stale names goes; other files are left alone.
func TestPrune(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-2 * time.Hour)
	write := func(name string, size int, mod time.Time) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var files []string
	for i, k := range []string{"a", "b", "c"} {
		files = append(files, write(Name(k, ".x"), 1000, old.Add(time.Duration(i)*time.Minute)))
	}
	staleTmp := write(Name("d", ".x")+".tmp123", 10, old)
	freshTmp := write(Name("e", ".x")+".tmp456", 10, time.Now())
	marker := write("gone.marker", 0, time.Now())
	kept := write("other.file", 5000, old)
	d := Dir{Path: dir, Suffix: ".x", MaxBytes: 2000, Stale: func(name string) bool { return strings.HasPrefix(name, "gone.") }}
	d.Prune()
	for i, p := range files {
		_, err := os.Stat(p)
		if gone := errors.Is(err, os.ErrNotExist); gone != (i == 0) {
			t.Errorf("cache file %d: removed %v, want %v", i, gone, i == 0)
		}
	}
	for p, want := range map[string]bool{staleTmp: false, freshTmp: true, marker: false, kept: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: kept %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
	// A missing directory is nothing to prune.
	Dir{Path: filepath.Join(dir, "none"), Suffix: ".x"}.Prune()
}

// TestWriteFileAndRead: WriteFile creates the directory and replaces the
// file whole; Read refuses a file past its bound.
func TestWriteFileAndRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", Name("k", ".x"))
	for _, data := range []string{"first version", "second"} {
		if err := WriteFile(path, []byte(data)); err != nil {
			t.Fatal(err)
		}
		got, err := Read(path, 100)
		if err != nil || string(got) != data {
			t.Fatalf("Read = %q, %v; want %q", got, err, data)
		}
	}
	if got, err := Read(path, int64(len("second"))); err != nil || string(got) != "second" {
		t.Errorf("Read at exactly the bound = %q, %v", got, err)
	}
	if _, err := Read(path, 3); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Read past the bound: %v, want ErrTooLarge", err)
	}
	if _, err := Read(path+".none", 3); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Read of a missing file: %v", err)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("directory holds %d files, want the cache file alone", len(ents))
	}
	if err := Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := Remove(path); err != nil {
		t.Errorf("Remove of a missing file: %v", err)
	}
}

// TestReadLarge: a file of many pages reads back whole, in one buffer of
// its size.
func TestReadLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big")
	want := make([]byte, 400<<10)
	for i := range want {
		want[i] = byte(i * 7)
	}
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path, 1<<20)
	if err != nil || string(got) != string(want) {
		t.Fatalf("Read of %d bytes: %d bytes, %v", len(want), len(got), err)
	}
	if cap(got) != len(want)+1 {
		t.Errorf("buffer of %d bytes for a %d-byte file", cap(got), len(want))
	}
	if _, err := Read(path, int64(len(want)-1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Read one byte under the size: %v, want ErrTooLarge", err)
	}
}

// TestReplaceFailureLeavesNoTemp: a rename that fails (the target is a
// directory) removes the temporary file and keeps what was there.
func TestReplaceFailureLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, Name("k", ".x"))
	if err := os.MkdirAll(filepath.Join(path, "child"), 0o700); err != nil {
		t.Fatal(err)
	}
	tmp, err := CreateTemp(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Replace(tmp, path, []byte("data")); err == nil {
		t.Fatal("Replace over a non-empty directory succeeded")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || !ents[0].IsDir() {
		t.Errorf("directory after a failed Replace: %v", ents)
	}
	tmp, err = CreateTemp(path)
	if err != nil {
		t.Fatal(err)
	}
	Discard(tmp)
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("Discard left %d files", len(ents)-1)
	}
}
