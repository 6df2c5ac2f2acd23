//go:build unix

package fs

import (
	"errors"
	iofs "io/fs"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// dir is an open directory of the store, reached from the root without
// following a link: every name below the root is taken for what it is,
// so nothing the store's files name elsewhere is read, written or
// deleted. The root itself may be a link the user chose.
type dir struct {
	fd   int
	path string // for the system's errors only
}

// openDir opens the store's directory rel ("" for the root, else a
// slash-separated path) without following links below root, making the
// missing ones if create. A link or a file where a directory belongs is
// a *linkedError (a link) or ENOTDIR; a missing one, ErrNotExist.
func openDir(root, rel string, create bool) (*dir, error) {
	fd, err := openNoIntr(unix.AT_FDCWD, root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) && create {
		if err = os.MkdirAll(root, 0o755); err == nil {
			fd, err = openNoIntr(unix.AT_FDCWD, root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: root, Err: err}
	}
	d := &dir{fd: fd, path: root}
	if rel == "" {
		return d, nil
	}
	for _, name := range strings.Split(rel, "/") {
		sub, err := d.sub(name, create)
		d.close()
		if err != nil {
			return nil, err
		}
		d = sub
	}
	return d, nil
}

// sub opens the directory name in d, never following a link.
func (d *dir) sub(name string, create bool) (*dir, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := openNoIntr(d.fd, name, flags, 0)
	if errors.Is(err, unix.ENOENT) && create {
		if err = unix.Mkdirat(d.fd, name, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
			fd, err = openNoIntr(d.fd, name, flags, 0)
		} else {
			err = &mkdirError{err: err}
		}
	}
	path := d.path + string(os.PathSeparator) + name
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EMLINK) {
			// A file there is another key to a reader ("a" beside "a/b",
			// as in S3), but to a writer, who needs the directory, it is
			// what stands in its place: the store's damage, in words.
			if m, serr := d.lstat(name); serr == nil && !m.mode.IsDir() && (create || !m.mode.IsRegular()) {
				return nil, &os.PathError{Op: "open", Path: path, Err: &standsError{mode: m.mode}}
			}
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &dir{fd: fd, path: path}, nil
}

func openNoIntr(dfd int, name string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dfd, name, flags, perm)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func (d *dir) close() { unix.Close(d.fd) }

// meta is what lstat says of a name.
type meta struct {
	mode    iofs.FileMode
	size    int64
	modTime time.Time
}

// lstat describes name in d as it is, a link as a link.
func (d *dir) lstat(name string) (meta, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return meta{}, &os.PathError{Op: "lstat", Path: d.path + string(os.PathSeparator) + name, Err: err}
	}
	return meta{mode: modeOf(uint32(st.Mode)), size: st.Size, modTime: time.Unix(st.Mtim.Unix())}, nil
}

// modeOf is the type bits of a system mode as an iofs.FileMode.
func modeOf(m uint32) iofs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return iofs.ModeDir
	case unix.S_IFLNK:
		return iofs.ModeSymlink
	case unix.S_IFIFO:
		return iofs.ModeNamedPipe
	case unix.S_IFSOCK:
		return iofs.ModeSocket
	case unix.S_IFCHR:
		return iofs.ModeDevice | iofs.ModeCharDevice
	case unix.S_IFBLK:
		return iofs.ModeDevice
	}
	return iofs.ModeIrregular
}

// openRead opens name in d for reading, never following a link, and
// without waiting on a pipe for a writer: what it opened is checked to
// be a file by its caller.
func (d *dir) openRead(name string) (*os.File, error) {
	path := d.path + string(os.PathSeparator) + name
	fd, err := openNoIntr(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK) {
			err = &standsError{mode: iofs.ModeSymlink}
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// remove unlinks name in d: a link itself, never what it names; a
// directory is not removed.
func (d *dir) remove(name string) error {
	if err := unix.Unlinkat(d.fd, name, 0); err != nil {
		return &os.PathError{Op: "remove", Path: d.path + string(os.PathSeparator) + name, Err: err}
	}
	return nil
}

// createTemp writes data to a new file in d, fsyncs it and returns its name.
func (d *dir) createTemp(data []byte) (string, error) {
	for try := 0; ; try++ {
		name := "put-" + strconv.FormatUint(rand.Uint64(), 36)
		fd, err := openNoIntr(d.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if errors.Is(err, unix.EEXIST) && try < 100 {
			continue
		}
		if err != nil {
			return "", &os.PathError{Op: "create", Path: d.path + string(os.PathSeparator) + name, Err: err}
		}
		f := os.NewFile(uintptr(fd), d.path+string(os.PathSeparator)+name)
		_, werr := f.Write(data)
		serr := f.Sync()
		cerr := f.Close()
		if err := errors.Join(werr, serr, cerr); err != nil {
			unix.Unlinkat(d.fd, name, 0)
			return "", err
		}
		return name, nil
	}
}

// link gives the file from/fromName the name name in d too; it fails
// with an error matching iofs.ErrExist if name exists.
func (d *dir) link(from *dir, fromName, name string) error {
	if err := unix.Linkat(from.fd, fromName, d.fd, name, 0); err != nil {
		return &os.LinkError{Op: "link", Old: from.path + string(os.PathSeparator) + fromName, New: d.path + string(os.PathSeparator) + name, Err: err}
	}
	return nil
}

// rename moves the file from/fromName to name in d, replacing what is there.
func (d *dir) rename(from *dir, fromName, name string) error {
	if err := unix.Renameat(from.fd, fromName, d.fd, name); err != nil {
		return &os.LinkError{Op: "rename", Old: from.path + string(os.PathSeparator) + fromName, New: d.path + string(os.PathSeparator) + name, Err: err}
	}
	return nil
}

// sync fsyncs d, making a name just renamed or linked into it durable.
func (d *dir) sync() error {
	err := unix.Fsync(d.fd)
	// Some file systems refuse fsync on directories; the rename is still atomic.
	if err == nil || errors.Is(err, syscall.EINVAL) {
		return nil
	}
	return &os.PathError{Op: "sync", Path: d.path, Err: err}
}

// readDir returns d's entries, in directory order.
func (d *dir) readDir() ([]iofs.DirEntry, error) {
	fd, err := unix.Dup(d.fd)
	if err != nil {
		return nil, &os.PathError{Op: "readdir", Path: d.path, Err: err}
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	return f.ReadDir(-1)
}
