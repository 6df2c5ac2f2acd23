package fs

import (
	"os"

	"github.com/cairnlog/cairn/internal/dirent"
	"golang.org/x/sys/unix"
)

// eachEntry calls fn with each entry of d but "." and "..", in directory
// order: its name, valid only during the call (a view of a reused
// buffer: fn copies what it keeps), and whether it is a directory, as
// its directory entry says or, where the file system leaves the type
// out, as an lstat says. Reading the entries raw, rather than through
// os.File.ReadDir, allocates nothing for a name fn passes over: a
// session of 100,000 steps is one directory whose listing after the
// head hint keeps a handful of them.
func (d *dir) eachEntry(fn func(name []byte, isDir bool) error) error {
	fd, err := unix.Dup(d.fd)
	if err != nil {
		return &os.PathError{Op: "readdir", Path: d.path, Err: err}
	}
	defer unix.Close(fd)
	// The dup shares d's offset: read from the start, whatever an earlier
	// listing of d left.
	if _, err := unix.Seek(fd, 0, 0); err != nil {
		return &os.PathError{Op: "readdir", Path: d.path, Err: err}
	}
	return dirent.Each(fd, d.path, func(name []byte, typ byte) error {
		isDir := typ == dirent.Dir
		if typ == dirent.Unknown {
			m, err := d.lstat(string(name))
			if os.IsNotExist(err) {
				return nil // deleted while listing
			}
			if err != nil {
				return err
			}
			isDir = m.mode.IsDir()
		}
		return fn(name, isDir)
	})
}
