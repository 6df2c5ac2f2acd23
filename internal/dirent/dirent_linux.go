//go:build linux

package dirent

import (
	"io/fs"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Entry types, as the directory entry gives them. Unknown means the file
// system left the type out: the caller lstats the name if it needs it.
const (
	Unknown = unix.DT_UNKNOWN
	Dir     = unix.DT_DIR
)

// bufs are getdents buffers, reused: a fresh buffer for each listing cost
// a page fault per page.
var bufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// Each calls fn with each entry of the open directory fd, read from
// path, but "." and "..", in directory order, from fd's current offset
// (path only names the directory in errors): the entry's name,
// valid only during the call (fn copies what it keeps), and its type
// (unix.DT_*; Unknown where the file system leaves it out). It stops at
// fn's first error and returns it. A record that does not fit the
// buffer's bounds is EIO: the kernel's bytes are not trusted blindly.
func Each(fd int, path string, fn func(name []byte, typ byte) error) error {
	bp := bufs.Get().(*[]byte)
	defer bufs.Put(bp)
	buf := *bp
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "readdir", Path: path, Err: err}
		}
		if n <= 0 {
			return nil
		}
		for rec := buf[:n]; len(rec) > 0; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			const nameAt = 19
			if len(rec) < nameAt {
				return &fs.PathError{Op: "readdir", Path: path, Err: unix.EIO}
			}
			reclen := int(*(*uint16)(unsafe.Pointer(&rec[16])))
			if reclen < nameAt || reclen > len(rec) {
				return &fs.PathError{Op: "readdir", Path: path, Err: unix.EIO}
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
			if err := fn(name, typ); err != nil {
				return err
			}
		}
	}
}
