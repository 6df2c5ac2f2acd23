// Package cachedir keeps a bounded directory of local cache files: files
// named for a hash of their key, each replaced whole and atomically (a
// temporary file beside it, renamed over it), read with a bound, and
// evicted least recently written first when the directory outgrows its
// byte budget. What a file holds is its owner's business (the head cache
// and the stat cache each have their own format); a cache file is always
// a hint that its owner may lose at any time.
package cachedir

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cairnlog/cairn/cas"
)

// StaleTemp is how old a temporary file must be before Prune removes it:
// older than any save in progress, so it was left by a process that died
// before renaming it.
const StaleTemp = time.Hour

// Dir is a directory of cache files that end in Suffix, which together
// take at most MaxBytes after a Prune.
type Dir struct {
	Path     string
	Suffix   string
	MaxBytes int64
	// Stale, if set, reports whether a file of the directory that is
	// neither a cache file nor a temporary one (a marker its owner
	// keeps beside a cache file) is left over and may be removed.
	Stale func(name string) bool
}

// Name returns the name of the cache file for key, ending in suffix: a
// hash of key, so that keys (store URLs, session names, paths) never
// become file names.
func Name(key, suffix string) string {
	sum := cas.Sum([]byte(key))
	return sum.String()[:32] + suffix
}

// ErrTooLarge reports a cache file larger than the bound it is read with.
var ErrTooLarge = errors.New("too large")

// Read returns the content of the file at path, if it holds at most max
// bytes and is a regular file: a named pipe or device put where a cache
// file was would hang the read (opening a pipe waits for a writer,
// whatever signal the process is sent) or never end it.
func Read(path string, max int64) ([]byte, error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("read cache file %s: not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Read into a buffer of the file's size (one byte more, to see that
	// it did not grow past max): io.ReadAll alone would copy a 400 KB
	// cache file at every doubling of its buffer.
	size := int64(512)
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		size = min(fi.Size(), max) + 1
	}
	data := make([]byte, 0, size)
	for int64(len(data)) <= max {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := f.Read(data[len(data):min(int64(cap(data)), max+1)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(data)) > max {
		return nil, ErrTooLarge
	}
	return data, nil
}

// Unseal checks the frame its owners give a cache file — magic, a
// version byte, the body, then the BLAKE3 hash of all that before it —
// and returns the body. Its error says what is wrong ("bad magic",
// "version 9", "checksum mismatch"), for the owner to wrap in its own.
func Unseal(data []byte, magic string, version byte) ([]byte, error) {
	if len(data) < len(magic)+1+cas.IDSize || string(data[:len(magic)]) != magic {
		return nil, errors.New("bad magic")
	}
	if data[len(magic)] != version {
		return nil, fmt.Errorf("version %d", data[len(magic)])
	}
	body := data[:len(data)-cas.IDSize]
	if cas.Sum(body) != cas.ID(data[len(body):]) {
		return nil, errors.New("checksum mismatch")
	}
	return body[len(magic)+1:], nil
}

// CreateTemp creates a temporary file beside path (and path's directory,
// if missing), for Replace to rename over it.
func CreateTemp(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	return os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
}

// Replace writes data to tmp (from CreateTemp beside path), closes it and
// renames it over path; on any failure it removes tmp.
func Replace(tmp *os.File, path string, data []byte) error {
	_, err := tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// Discard closes and removes tmp, a temporary file that will not be
// renamed.
func Discard(tmp *os.File) {
	tmp.Close()
	os.Remove(tmp.Name())
}

// WriteFile replaces the file at path with data, atomically.
func WriteFile(path string, data []byte) error {
	tmp, err := CreateTemp(path)
	if err != nil {
		return err
	}
	return Replace(tmp, path, data)
}

// Remove deletes the file at path; one that does not exist is no error.
func Remove(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove cache file: %w", err)
	}
	return nil
}

// Prune removes the least recently written cache files of d until they
// take at most d.MaxBytes, temporary files older than StaleTemp, and the
// files d.Stale reports. Best effort: another process may be pruning
// too, and what cannot be removed is left.
func (d Dir) Prune() {
	ents, err := os.ReadDir(d.Path)
	if err != nil {
		return
	}
	type file struct {
		name string
		size int64
		mod  time.Time
	}
	var files []file
	var total int64
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		name := e.Name()
		switch {
		case strings.HasSuffix(name, d.Suffix):
			files = append(files, file{name, fi.Size(), fi.ModTime()})
			total += fi.Size()
		case strings.Contains(name, d.Suffix+".tmp"):
			if time.Since(fi.ModTime()) > StaleTemp {
				os.Remove(filepath.Join(d.Path, name))
			}
		case d.Stale != nil && d.Stale(name):
			os.Remove(filepath.Join(d.Path, name))
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod.Before(files[j].mod) })
	for _, f := range files {
		if total <= d.MaxBytes {
			break
		}
		if os.Remove(filepath.Join(d.Path, f.name)) == nil {
			total -= f.size
		}
	}
}
