package fs

import (
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// direntBufs are getdents buffers, reused across listings.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// eachEntry calls fn with each entry of d but "." and "..", in directory
// order: its name, valid only during the call (a view of a reused
// buffer: fn copies what it keeps), and whether it is a directory, as
// its directory entry says or, where the file system leaves the type
// out, as an lstat says. Reading the entries raw, rather than through
// os.File.ReadDir, allocates nothing for a name fn passes over: a
// session of 100,000 steps is one directory whose listing after the
// head hint keeps a handful of them.
func (d *dir) eachEntry(fn func(name []byte, isDir bool) error) error {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
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
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "readdir", Path: d.path, Err: err}
		}
		if n <= 0 {
			return nil
		}
		for rec := buf[:n]; len(rec) > 0; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			const nameAt = 19
			if len(rec) < nameAt {
				return &os.PathError{Op: "readdir", Path: d.path, Err: unix.EIO}
			}
			reclen := int(*(*uint16)(unsafe.Pointer(&rec[16])))
			if reclen < nameAt || reclen > len(rec) {
				return &os.PathError{Op: "readdir", Path: d.path, Err: unix.EIO}
			}
			typ := rec[18]
			name := rec[nameAt:reclen]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			rec = rec[reclen:]
			if len(name) == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			isDir := typ == unix.DT_DIR
			if typ == unix.DT_UNKNOWN {
				m, err := d.lstat(string(name))
				if os.IsNotExist(err) {
					continue // deleted while listing
				}
				if err != nil {
					return err
				}
				isDir = m.mode.IsDir()
			}
			if err := fn(name, isDir); err != nil {
				return err
			}
		}
	}
}
