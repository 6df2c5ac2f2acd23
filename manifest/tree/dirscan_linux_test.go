//go:build linux

package tree

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas"
)

// TestScanStatMatchesLstat: the scan's fstatat gives, for every kind of
// entry, exactly the stat data os.Lstat gave before it, so stat caches
// written by earlier versions still match.
func TestScanStatMatchesLstat(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "plain"), []byte("x"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "exec"), []byte("#!/bin/sh\n"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "setuid"), nil, 0o600))
	must(os.Chmod(filepath.Join(dir, "setuid"), 0o4755|os.ModeSetuid|os.ModeSetgid|os.ModeSticky))
	must(os.Symlink("plain", filepath.Join(dir, "link")))
	must(os.Mkdir(filepath.Join(dir, "sub"), 0o750))
	entries, err := readDirStat(dir, true)
	must(err)
	if got, want := len(entries), 5; got != want {
		t.Fatalf("scanned %d entries, want %d", got, want)
	}
	for i, e := range entries {
		if i > 0 && entries[i-1].name >= e.name {
			t.Errorf("entries out of order: %q before %q", entries[i-1].name, e.name)
		}
		info, err := os.Lstat(filepath.Join(dir, e.name))
		must(err)
		if got, want := e.st, statOf(info); got != want {
			t.Errorf("%s: scanned %+v, lstat %+v", e.name, got, want)
		}
	}
}

// TestScanRefusesSymlinkedSubdir: a subdirectory is opened without
// following a symlink, so one swapped in for it is not walked.
func TestScanRefusesSymlinkedSubdir(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	if _, err := readDirStat(filepath.Join(dir, "sub"), false); err == nil {
		t.Error("a symlink opened as a subdirectory")
	}
	if _, err := readDirStat(filepath.Join(dir, "sub"), true); err != nil {
		t.Errorf("the root through a symlink: %v", err)
	}
}

// TestReadSmall: a small file is read whole whatever its lstat said,
// and reading stops one byte past SmallFile.
func TestReadSmall(t *testing.T) {
	for _, tc := range []struct {
		have int
		said int64
		want int
	}{
		{0, 0, 0}, {100, 100, 100}, {100, 10, 100}, {100, 1000, 100},
		{SmallFile, SmallFile, SmallFile}, {SmallFile + 5000, 100, SmallFile + 1},
		{SmallFile + 5000, SmallFile, SmallFile + 1},
	} {
		data := make([]byte, tc.have)
		for i := range data {
			data[i] = byte(i)
		}
		got, err := readSmall(&oneByteAtATime{data}, tc.said)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != tc.want || string(got) != string(data[:tc.want]) {
			t.Errorf("have %d, lstat said %d: read %d bytes, want the first %d", tc.have, tc.said, len(got), tc.want)
		}
	}
}

// oneByteAtATime is a reader that returns short reads.
type oneByteAtATime struct{ p []byte }

func (r *oneByteAtATime) Read(b []byte) (int, error) {
	if len(r.p) == 0 {
		return 0, io.EOF
	}
	if len(b) == 0 {
		return 0, nil
	}
	n := copy(b[:min(len(b), 7)], r.p)
	r.p = r.p[n:]
	return n, nil
}

// TestScanLargeDir: a directory whose names take many getdents buffers
// is read whole and sorted.
func TestScanLargeDir(t *testing.T) {
	dir := t.TempDir()
	const n = 1500
	for i := range n {
		name := filepath.Join(dir, fmt.Sprintf("a-rather-long-file-name-to-fill-buffers-%05d.txt", (i*7919)%n))
		if err := os.WriteFile(name, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := readDirStat(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != n {
		t.Fatalf("scanned %d entries, want %d", len(entries), n)
	}
	for i, e := range entries {
		if want := fmt.Sprintf("a-rather-long-file-name-to-fill-buffers-%05d.txt", i); e.name != want {
			t.Fatalf("entry %d is %q, want %q", i, e.name, want)
		}
	}
}

// TestScanStopsWithTheBuild: a build that fails early (an unsupported
// file in its first directory) returns its error and leaves no scan
// worker behind, however much of the tree is still unread; a good tree
// of many directories builds to the same ref whatever the worker count.
func TestScanStopsWithTheBuild(t *testing.T) {
	root := t.TempDir()
	for i := range 60 {
		sub := filepath.Join(root, fmt.Sprintf("d%02d", i), "inner")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, "f"), []byte(fmt.Sprint(i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var want Ref
	for _, workers := range []int{1, 2, 7} {
		got, err := BuildDirWith(root, discardSink{}, DirOptions{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if workers == 1 {
			want = got
		} else if !got.Equal(want) {
			t.Errorf("%d workers built %v, 1 worker %v", workers, got, want)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "d00", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	if _, err := BuildDirWith(root, discardSink{}, DirOptions{Workers: 2}); err == nil || !strings.Contains(err.Error(), "fifo") {
		t.Fatalf("build with a fifo: %v", err)
	}
	// A worker that has signalled its end (stop's wait) may not have
	// exited yet: wait for the count to come down; a worker left behind
	// never lets it.
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(10 * time.Second); after > before && time.Now().Before(deadline); after = runtime.NumGoroutine() {
		time.Sleep(time.Millisecond)
	}
	if after > before {
		t.Errorf("%d goroutines before the build, %d after", before, after)
	}
}

type discardSink struct{}

func (discardSink) Put(cas.ID, []byte) error { return nil }
