//go:build linux

package tree

import (
	"fmt"
	"io/fs"
	"slices"

	"github.com/cairnlog/cairn/internal/dirent"
	"golang.org/x/sys/unix"
)

// readDirStat reads the names of directory p and lstats each relative to
// the directory's descriptor (fstatat), so the kernel resolves one name
// per entry instead of the whole path, and nothing is allocated per
// entry but its name. A subdirectory (root false) is opened without
// following a symlink: one swapped in for it since its parent was read
// is refused, not followed out of the tree.
func readDirStat(p string, root bool) ([]scanEntry, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	if !root {
		flags |= unix.O_NOFOLLOW
	}
	var fd int
	var err error
	for {
		fd, err = unix.Open(p, flags, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		if !root && (err == unix.ELOOP || err == unix.ENOTDIR) {
			return nil, unreadable(fmt.Errorf("read state file %s: changed type while being read", p))
		}
		return nil, dirError(p, &fs.PathError{Op: "open", Path: p, Err: err})
	}
	defer unix.Close(fd)
	names, err := readNames(fd)
	if err != nil {
		return nil, dirError(p, err)
	}
	slices.Sort(names) // cheaper to swap than entries
	entries := make([]scanEntry, len(names))
	for i, name := range names {
		var st unix.Stat_t
		for {
			err = unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
			if err != unix.EINTR {
				break
			}
		}
		if err != nil {
			return nil, unreadable(fmt.Errorf("read state file %s/%s: %w", p, name, &fs.PathError{Op: "lstat", Path: name, Err: err}))
		}
		entries[i] = scanEntry{name: name, st: statOfSys(&st)}
	}
	return entries, nil
}

// readNames returns the entry names of the open directory fd, "." and
// ".." left out. Its error is the system's alone: the caller names the
// directory.
func readNames(fd int) ([]string, error) {
	var names []string
	err := dirent.Each(fd, "", func(name []byte, _ byte) error {
		names = append(names, string(name))
		return nil
	})
	if pe, ok := err.(*fs.PathError); ok {
		return nil, pe.Err
	}
	return names, err
}

// statOfSys returns the stat data of st, in the form statOf gives for
// the fs.FileInfo of the same lstat.
func statOfSys(st *unix.Stat_t) FileStat {
	return FileStat{
		Size:  st.Size,
		Mtime: st.Mtim.Sec*1e9 + st.Mtim.Nsec,
		Ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec,
		Inode: st.Ino,
		Dev:   st.Dev,
		Mode:  uint32(fileMode(st.Mode)),
	}
}

// fileMode converts a stat mode to fs.FileMode bits as package os does.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
