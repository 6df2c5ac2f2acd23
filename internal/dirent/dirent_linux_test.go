//go:build linux

package dirent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// TestEachReadsEveryEntryOnce lists a directory holding more names than
// one getdents buffer takes, long names among them, and checks every
// name comes once, "." and ".." never, with a directory's type.
func TestEachReadsEveryEntryOnce(t *testing.T) {
	d := t.TempDir()
	var want []string
	for i := 0; i < 3000; i++ {
		name := fmt.Sprintf("%020d", i)
		if i%100 == 0 {
			name = fmt.Sprintf("%0200d", i)
		}
		if err := os.WriteFile(filepath.Join(d, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	if err := os.Mkdir(filepath.Join(d, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	want = append(want, "sub")
	fd, err := unix.Open(d, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var got []string
	err = Each(fd, d, func(name []byte, typ byte) error {
		got = append(got, string(name))
		isDir := string(name) == "sub"
		if typ != Unknown && (typ == Dir) != isDir {
			t.Errorf("%s: type %d", name, typ)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("got %d names, want %d", len(got), len(want))
	}
}

// TestEachStopsAtTheCallersError checks fn's error ends the listing and
// comes back as it is.
func TestEachStopsAtTheCallersError(t *testing.T) {
	d := t.TempDir()
	for i := 0; i < 10; i++ {
		os.WriteFile(filepath.Join(d, fmt.Sprint(i)), nil, 0o644)
	}
	fd, err := unix.Open(d, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	stop := errors.New("stop")
	calls := 0
	err = Each(fd, d, func([]byte, byte) error { calls++; return stop })
	if err != stop || calls != 1 {
		t.Fatalf("got %v after %d calls, want stop after 1", err, calls)
	}
}

// TestEachOnAFileFails checks a descriptor that is no directory is an
// error, not an empty listing.
func TestEachOnAFileFails(t *testing.T) {
	f := filepath.Join(t.TempDir(), "f")
	os.WriteFile(f, []byte("x"), 0o644)
	fd, err := unix.Open(f, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := Each(fd, f, func([]byte, byte) error { return nil }); !errors.Is(err, unix.ENOTDIR) {
		t.Fatalf("got %v, want ENOTDIR", err)
	}
}
