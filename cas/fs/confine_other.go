//go:build !unix

package fs

import (
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// dir is a directory of the store, reached from the root without
// following a link: each name below the root is looked at (Lstat)
// before it is used. Where the system has no calls relative to an open
// directory, a link swapped in between the look and the use is not
// seen; the unix version has no such window.
type dir struct {
	path string
}

// openDir is the unix version's, by paths.
func openDir(root, rel string, create bool) (*dir, error) {
	if create {
		if err := os.MkdirAll(root, 0o755); err != nil {
			return nil, err
		}
	}
	fi, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &os.PathError{Op: "open", Path: root, Err: errors.New("not a directory")}
	}
	d := &dir{path: root}
	if rel == "" {
		return d, nil
	}
	for _, name := range strings.Split(rel, "/") {
		if d, err = d.sub(name, create); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func (d *dir) sub(name string, create bool) (*dir, error) {
	path := filepath.Join(d.path, name)
	fi, err := os.Lstat(path)
	if errors.Is(err, iofs.ErrNotExist) && create {
		if err = os.Mkdir(path, 0o755); err == nil || errors.Is(err, iofs.ErrExist) {
			fi, err = os.Lstat(path)
		} else {
			err = &mkdirError{err: err}
		}
	}
	switch {
	case err != nil:
		return nil, err
	case fi.IsDir():
		return &dir{path: path}, nil
	case fi.Mode().IsRegular() && !create:
		return nil, &os.PathError{Op: "open", Path: path, Err: errNotDir}
	}
	return nil, &os.PathError{Op: "open", Path: path, Err: &standsError{mode: fi.Mode()}}
}

func (d *dir) close() {}

// meta is what lstat says of a name.
type meta struct {
	mode    iofs.FileMode
	size    int64
	modTime time.Time
}

func (d *dir) lstat(name string) (meta, error) {
	fi, err := os.Lstat(filepath.Join(d.path, name))
	if err != nil {
		return meta{}, err
	}
	return meta{mode: fi.Mode().Type(), size: fi.Size(), modTime: fi.ModTime()}, nil
}

func (d *dir) openRead(name string) (*os.File, error) {
	m, err := d.lstat(name)
	if err != nil {
		return nil, err
	}
	if !m.mode.IsRegular() {
		return nil, &os.PathError{Op: "open", Path: filepath.Join(d.path, name), Err: &standsError{mode: m.mode}}
	}
	return os.Open(filepath.Join(d.path, name))
}

func (d *dir) remove(name string) error {
	m, err := d.lstat(name)
	if err != nil {
		return err
	}
	if m.mode.IsDir() {
		return &os.PathError{Op: "remove", Path: filepath.Join(d.path, name), Err: &standsError{mode: m.mode}}
	}
	return os.Remove(filepath.Join(d.path, name))
}

func (d *dir) createTemp(data []byte) (string, error) {
	f, err := os.CreateTemp(d.path, "put-*")
	if err != nil {
		return "", err
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return filepath.Base(f.Name()), nil
}

func (d *dir) link(from *dir, fromName, name string) error {
	return os.Link(filepath.Join(from.path, fromName), filepath.Join(d.path, name))
}

func (d *dir) rename(from *dir, fromName, name string) error {
	return os.Rename(filepath.Join(from.path, fromName), filepath.Join(d.path, name))
}

// sync does nothing here: Windows cannot fsync a directory.
// FlushFileBuffers wants a handle opened for writing, which a directory
// refuses ("Access is denied"; os.File.Sync on an opened directory fails
// so), and flushing is not defined for directories at all. The file's
// own bytes were flushed before its rename or link; the name itself is
// in NTFS's metadata journal, so a crash recovers to the state before or
// after the rename or link, never a torn object, though a name made in
// the last moments before a power loss may be missing.
func (d *dir) sync() error { return nil }

func (d *dir) readDir() ([]iofs.DirEntry, error) { return os.ReadDir(d.path) }
