//go:build linux

package tree

import (
	"io/fs"
	"syscall"
)

// statOf returns the stat data of info, which came from lstat.
func statOf(info fs.FileInfo) FileStat {
	st := FileStat{Size: info.Size(), Mtime: info.ModTime().UnixNano(), Mode: uint32(info.Mode())}
	if sys, ok := info.Sys().(*syscall.Stat_t); ok {
		st.Ctime = int64(sys.Ctim.Sec)*1e9 + int64(sys.Ctim.Nsec)
		st.Inode = uint64(sys.Ino)
		st.Dev = uint64(sys.Dev)
	}
	return st
}
