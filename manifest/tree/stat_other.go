//go:build !linux

package tree

import "io/fs"

// statOf returns the stat data of info. Without a change time or inode
// the modification time stands in for both.
func statOf(info fs.FileInfo) FileStat {
	m := info.ModTime().UnixNano()
	return FileStat{Size: info.Size(), Mtime: m, Ctime: m, Mode: uint32(info.Mode())}
}
