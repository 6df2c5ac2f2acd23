package tree

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/chunker"
)

// Files up to SmallFile bytes are split with SmallFileChunks, larger ones
// with chunker.Default. Source files and notes are mostly small and are
// edited a few lines at a time: with 16 KiB chunks such an edit rewrote
// the whole file, with 2 KiB chunks it rewrites about one chunk and the
// file's chunk list (smaller chunks saved no more: their list nodes and
// index entries grew as fast as the chunks shrank). A file that grows past SmallFile is re-chunked once.
// Both are part of the stored format (they decide which blobs dedup).
const SmallFile = 64 << 10

// SmallFileChunks are the chunking parameters of small files.
var SmallFileChunks = chunker.Params{Min: 512, Avg: 2 << 10, Max: 8 << 10}

// FileStat is the stat data of a file or symlink that a StatCache keys
// its ref on, as git's index does: if none of it changed, neither did
// the content (see StatCache for the racy case).
type FileStat struct {
	Size  int64
	Mtime int64 // ns since the epoch
	Ctime int64 // ns since the epoch (inode change time)
	Inode uint64
	Dev   uint64
	Mode  uint32 // fs.FileMode bits: type and permissions
}

// entryMode returns the directory-entry mode a file of stat mode m gets.
func entryMode(m fs.FileMode) byte {
	switch {
	case m.IsDir():
		return ModeDir
	case m&fs.ModeSymlink != 0:
		return ModeSymlink
	case m&0o111 != 0:
		return ModeExec
	}
	return ModeFile
}

// StatCache remembers, from one build of a directory state to the next,
// each file's stat data and ref and each directory's ref, so that a build
// reads only the files that changed. Paths are slash-separated and
// relative to the state's root ("" is the root itself).
//
// The builder trusts a recorded file ref only if the file's stat data now
// equals the recorded one exactly and the ref is known to the store
// (DirOptions.Known); otherwise it reads the file. A cache must not
// record stat data that could be racy: a file modified during the build,
// in the same timestamp tick as its stat, keeps its stat data while its
// content changes, so an implementation drops records whose mtime or
// ctime is not strictly older than the start of the build at the
// filesystem's timestamp granularity (git's is_racy_timestamp).
type StatCache interface {
	// File returns what was recorded for the file or symlink at path.
	File(path string) (st FileStat, ref Ref, ok bool)
	// Dir returns what was recorded for the directory at path: its ref
	// and number of entries.
	Dir(path string) (ref Ref, entries int, ok bool)
	// SetFile and SetDir record the outcome of this build for the next.
	SetFile(path string, st FileStat, ref Ref)
	SetDir(path string, entries int, ref Ref)
}

// DirOptions tune BuildDirWith.
type DirOptions struct {
	// Cache, if set, lets the build skip files whose stat data did not
	// change, and receives this build's records.
	Cache StatCache
	// Known reports whether the store already holds a blob or node. A ref
	// from Cache is used only if Known says so, so a stale or foreign
	// cache can cost reads, never a missing blob. Without Known the cache
	// is only written, never trusted.
	Known func(cas.ID) bool
	// Workers is how many goroutines hash (and, for a ChunkSink, encode)
	// the chunks of a large file (0: GOMAXPROCS). The stored result does
	// not depend on it.
	Workers int
	// Scan, if set, is a scan of the tree begun by StartScan while the
	// caller did other work; the build takes it over (and stops it)
	// instead of starting its own. Its root must be the build's.
	Scan *Scan
}

// Scan is a scan of a directory tree started ahead of its build, so that
// reading the tree's directories and lstat'ing every entry (most of the
// work of a commit whose files mostly did not change) overlaps whatever
// the caller does before the build: loading the head, opening the stat
// cache. Pass it in DirOptions.Scan, or Stop it.
type Scan struct {
	root    string
	err     error // the root is not a readable directory
	scanned *scanDir
	scan    *scanner
}

// ErrUnreadable reports a file or directory of a directory state that
// could not be read (permission denied, gone meanwhile): the state as
// given cannot be committed, which no retry of the store changes.
var ErrUnreadable = errors.New("a file or directory of the state cannot be read")

// unreadableError is a failure to read a file or directory of the state,
// in its own words, matching ErrUnreadable too.
type unreadableError struct{ err error }

func (e *unreadableError) Error() string   { return e.err.Error() }
func (e *unreadableError) Unwrap() []error { return []error{e.err, ErrUnreadable} }

// unreadable marks err, a failure to read the state's own files, as
// ErrUnreadable.
func unreadable(err error) error { return &unreadableError{err} }

// StartScan starts scanning the directory tree at root on workers
// goroutines (0: GOMAXPROCS).
func StartScan(root string, workers int) *Scan {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Said in words, not as the system call that found it ("stat
		// DIR: no such file or directory").
		return &Scan{root: root, err: unreadable(fmt.Errorf("read state directory %s: it does not exist", root))}
	case err != nil:
		return &Scan{root: root, err: unreadable(fmt.Errorf("read state directory: %w", err))}
	case !fi.IsDir():
		return &Scan{root: root, err: unreadable(fmt.Errorf("read state directory %s: not a directory", root))}
	}
	scanned, scan := startScan(root, workers)
	return &Scan{root: root, scanned: scanned, scan: scan}
}

// Stop stops the scan, if it was not handed to a build, and returns when
// its workers are gone. It may be called more than once.
func (s *Scan) Stop() {
	if s.scan != nil {
		s.scan.stop()
	}
}

// BuildDir stores the directory tree at root through sink and returns the
// root ref. Regular files, executables, directories and symlinks are
// kept (a symlink as its target text); any other file type is an error.
func BuildDir(root string, sink Sink) (Ref, error) {
	return BuildDirWith(root, sink, DirOptions{})
}

// BuildDirWith is BuildDir with options: see DirOptions.
func BuildDirWith(root string, sink Sink, opts DirOptions) (Ref, error) {
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	sc := opts.Scan
	if sc == nil || sc.root != root {
		if sc != nil {
			sc.Stop()
		}
		sc = StartScan(root, workers)
	}
	defer sc.Stop()
	if sc.err != nil {
		return Ref{}, sc.err
	}
	b := &dirBuilder{sink: sink, cache: opts.Cache, known: opts.Known, workers: workers}
	ref, _, err := b.dir(sc.scanned, root, "")
	return ref, err
}

type dirBuilder struct {
	sink    Sink
	cache   StatCache
	known   func(cas.ID) bool
	workers int
}

// usable reports whether a ref recorded in the cache may stand for
// content without reading it. Inline refs are not: their files are tiny
// and cheaper to read than to argue about.
func (b *dirBuilder) usable(ref Ref) bool {
	return b.known != nil && ref.Kind != Inline && b.known(ref.ID)
}

// dir builds the scanned directory d at p (rel from the root). same
// reports that the directory's entries are exactly those the cache
// recorded, so its recorded ref stands for it.
func (b *dirBuilder) dir(d *scanDir, p, rel string) (ref Ref, same bool, err error) {
	<-d.done
	if d.err != nil {
		return Ref{}, false, d.err
	}
	defer func() { d.entries = nil }() // built: its stat data is no longer needed
	entries := make([]Entry, 0, len(d.entries))
	same = b.cache != nil
	for i := range d.entries {
		se := &d.entries[i]
		e := Entry{Name: se.name}
		var match bool
		childRel := se.name
		if rel != "" {
			childRel = rel + "/" + se.name
		}
		if ValidName(se.name) != nil {
			// A name a reader refuses (one holding a backslash): stored, the
			// step could not be read back or checked out.
			return Ref{}, false, fmt.Errorf("%s: %w", childRel, ErrUnsafeName)
		}
		if se.sub != nil {
			if strings.Count(childRel, "/") >= MaxDepth {
				// As for a JSON document: readers stop not far past it.
				top, _, _ := strings.Cut(childRel, "/")
				return Ref{}, false, fmt.Errorf("%w: more than %d levels of directories (under %s), the most a state may hold", ErrTooDeep, MaxDepth, top)
			}
			e.Mode = ModeDir
			e.Ref, match, err = b.dir(se.sub, filepath.Join(p, se.name), childRel)
		} else {
			e.Mode, e.Ref, match, err = b.file(p, se, childRel)
		}
		if err != nil {
			return Ref{}, false, err
		}
		same = same && match
		entries = append(entries, e)
	}
	if b.cache != nil {
		if old, n, ok := b.cache.Dir(rel); ok && same && n == len(entries) && b.usable(old) {
			b.cache.SetDir(rel, n, old)
			return old, true, nil
		}
	}
	ref, err = putDir(b.sink, entries)
	if err != nil {
		return Ref{}, false, err
	}
	if b.cache != nil {
		b.cache.SetDir(rel, len(entries), ref)
	}
	return ref, false, nil
}

// fileKind names a file type that a directory state cannot hold.
func fileKind(t fs.FileMode) string {
	switch {
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// file stores the scanned file or symlink se of directory dir. match
// reports that its mode and ref are those the cache recorded.
func (b *dirBuilder) file(dir string, se *scanEntry, rel string) (mode byte, ref Ref, match bool, err error) {
	t := fs.FileMode(se.st.Mode)
	if !t.IsRegular() && t&fs.ModeSymlink == 0 {
		return 0, Ref{}, false, fmt.Errorf("%s is %s: %w", rel, fileKind(t), ErrUnsupportedFile)
	}
	mode = entryMode(t)
	st := se.st
	var old FileStat
	var oldRef Ref
	var found bool
	if b.cache != nil {
		old, oldRef, found = b.cache.File(rel)
		if found && old == st && b.usable(oldRef) {
			b.cache.SetFile(rel, st, oldRef)
			return mode, oldRef, true, nil
		}
	}
	p := filepath.Join(dir, se.name)
	if mode == ModeSymlink {
		var target string
		if target, err = os.Readlink(p); err == nil {
			// Checkout and verify refuse a link that leaves the state's
			// directory; a commit must not store what cannot come back.
			if serr := SafeSymlink(rel, target); serr != nil {
				return 0, Ref{}, false, fmt.Errorf("%w: %s: %w", ErrUnsafeLink, p, serr)
			}
			ref, err = leafRef(b.sink, []byte(target))
		}
	} else {
		ref, err = buildFile(p, st.Size, b.sink, b.workers)
	}
	if err != nil {
		return 0, Ref{}, false, err
	}
	if b.cache != nil {
		b.cache.SetFile(rel, st, ref)
		match = found && entryMode(fs.FileMode(old.Mode)) == mode && oldRef.Equal(ref)
	}
	return mode, ref, match, nil
}

// buildFile stores the file at path, whose lstat said it has size bytes,
// a large one streamed through putStream with workers goroutines.
func buildFile(path string, size int64, sink Sink, workers int) (Ref, error) {
	f, err := os.Open(path)
	if err != nil {
		return Ref{}, unreadable(fmt.Errorf("read state file: %w", err))
	}
	defer f.Close()
	if size <= SmallFile {
		// Read one byte more than a small file may hold: a file that
		// grew since the lstat is chunked as the large file it is now.
		data, err := readSmall(f, size)
		if err != nil {
			return Ref{}, unreadable(fmt.Errorf("read state file %s: %w", path, err))
		}
		if len(data) <= SmallFile {
			return putChunksWith(sink, SmallFileChunks, data)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return Ref{}, unreadable(fmt.Errorf("read state file %s: %w", path, err))
		}
	}
	ref, _, err := putStream(sink, f, workers)
	if err != nil {
		return Ref{}, fmt.Errorf("read state file %s: %w", path, err)
	}
	return ref, nil
}

// readSmall reads f, whose lstat said it has size bytes, to its end or
// to SmallFile+1 bytes, whichever comes first: into a buffer of the
// expected size and one byte more, so that a file that did not change
// size since its lstat is read without growing the buffer.
func readSmall(f io.Reader, size int64) ([]byte, error) {
	data := make([]byte, 0, min(max(size, 0), SmallFile)+1)
	for len(data) <= SmallFile {
		if len(data) == cap(data) {
			data = slices.Grow(data, min(cap(data), SmallFile+1-len(data)))
		}
		n, err := f.Read(data[len(data):min(cap(data), SmallFile+1)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return data, nil
}

// ValidName reports whether name is acceptable as one directory entry
// read from a store: not empty, ".", "..", and free of '/', '\\' and NUL.
func ValidName(name string) error {
	if name == "" || name == "." || name == ".." || len(name) > MaxNameLen || strings.ContainsAny(name, "/\\\x00") {
		return fmt.Errorf("unsafe entry name %q", name)
	}
	return nil
}
