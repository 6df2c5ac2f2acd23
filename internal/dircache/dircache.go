// Package dircache keeps a directory state's stat cache in a local file:
// for each file its stat data and ref, for each directory its ref, so
// that the next commit of the same directory reads only the files that
// changed (git's index plays this part for `git commit -a`).
//
// The cache is a hint, never an authority. A file that cannot be read,
// is truncated, has the wrong version, checksum or key, or breaks any
// bound is ignored and rebuilt. It only maps stat data to refs: the
// builder (tree.BuildDirWith) takes names from the directory itself and
// uses a recorded ref only if the store is known to hold it, so a stale,
// foreign or hostile cache can cost reads, never a wrong or missing blob
// (short of one that forges the exact stat data of a file).
//
// Racy timestamps are handled as git's read-cache.c does with its index
// file's mtime: the cache takes the start of each build from the
// filesystem (the cache file's mtime, set to the filesystem's current
// time before the build stats anything) and does not record a file whose mtime or ctime
// is not strictly older than that, at the timestamp granularity of the
// file's filesystem. Such a file could change again within the same tick
// without changing its stat data; it is read again next time instead.
package dircache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/internal/cachedir"
	"github.com/cairnlog/cairn/internal/wire"
	"github.com/cairnlog/cairn/manifest/tree"
)

// Format and bounds of a cache file.
const (
	magic   = "CRDC"
	version = 1
	// MaxSize bounds a cache file; a larger cache is not written, and a
	// larger file is not read.
	MaxSize = 64 << 20
	// MaxEntries bounds the records of one cache.
	MaxEntries = 1 << 20
	// MaxDirBytes bounds the cache files of one directory together: when
	// a new cache file pushes them past it, the least recently written
	// ones are removed.
	MaxDirBytes = 256 << 20
	maxKey      = 1 << 13
	maxPath     = 1 << 16
	suffix      = ".dircache"
)

type record struct {
	dir     bool
	st      tree.FileStat // files
	entries int           // directories
	ref     tree.Ref
}

// pathRecord is a record with its path: a cache's records are a slice
// of them sorted by path, as the file stores them.
type pathRecord struct {
	path string
	record
}

// records are the records of one build, sorted by path. A build looks
// its paths up in nearly the file's order (each directory's names in
// order), so a lookup first tries the record after the last one found,
// then falls back to a binary search: no map is built when a cache is
// read, and no path string allocated (they are slices of one copy of
// the file).
type records struct {
	recs []pathRecord
	hint int
}

// find returns the record of path.
func (rs *records) find(path string) (record, bool) {
	i := rs.search(path, rs.hint)
	if i < 0 {
		return record{}, false
	}
	rs.hint = i + 1
	return rs.recs[i].record, true
}

// search returns the position of path's record, -1 if there is none,
// trying position first before a binary search.
func (rs *records) search(path string, first int) int {
	if first >= 0 && first < len(rs.recs) && rs.recs[first].path == path {
		return first
	}
	i, ok := slices.BinarySearchFunc(rs.recs, path, func(r pathRecord, p string) int { return strings.Compare(r.path, p) })
	if !ok {
		return -1
	}
	return i
}

// Cache is a tree.StatCache read from one file and written back to it by
// Save. Its zero value is not usable; call Open. Not safe for concurrent
// use.
type Cache struct {
	path string
	key  string
	old  records
	// kept marks the records of old that this build set again unchanged
	// (most of them, on a tree where little changed), and next holds the
	// others in the order they were set; Save sorts them and merges the
	// two. Only a tree's changes cost memory of their own.
	kept  []uint64
	nKept int
	next  []pathRecord
	// start is the build's start as the filesystem stamped it (ns);
	// f is the cache file, open to be rewritten by Save. Both are unset
	// when the cache cannot be written: then nothing is recorded.
	start int64
	f     *os.File
	// fresh: there was no cache file (Open created an empty one);
	// saving adds one to the directory.
	fresh bool
	// Ignored says why the file's records were not used ("" if they
	// were, or if there was no file).
	Ignored string
}

var _ tree.StatCache = (*Cache)(nil)

// FileName returns the name of the cache file for key: a hash of it, so
// that keys (store URLs, paths) never become file names.
func FileName(key string) string { return cachedir.Name(key, suffix) }

// Open reads the cache at path if it exists and was written for key, and
// opens the file for Save to rewrite (creating an empty one if there was
// none), stamping it with the build's start; call it before the build
// stats any file. It never fails: an unreadable or invalid file gives an
// empty cache, and a cache that cannot be written records nothing.
func Open(path, key string) *Cache {
	c := &Cache{path: path, key: key}
	data, err := cachedir.Read(path, MaxSize)
	c.fresh = errors.Is(err, os.ErrNotExist)
	if err == nil {
		k, recs, err := decode(data)
		switch {
		case err != nil:
			c.Ignored = err.Error()
		case k != key:
			c.Ignored = "written for another store, session or directory"
		default:
			c.old = records{recs: recs}
			c.kept = make([]uint64, (len(recs)+63)/64)
		}
	} else if !c.fresh {
		c.Ignored = err.Error()
	}
	if c.fresh {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return c
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return c
	}
	start, err := stampNow(f, path)
	if err != nil {
		f.Close()
		c.removeFresh()
		return c
	}
	c.f, c.start = f, start
	return c
}

// File implements tree.StatCache.
func (c *Cache) File(path string) (tree.FileStat, tree.Ref, bool) {
	r, ok := c.old.find(path)
	if !ok || r.dir {
		return tree.FileStat{}, tree.Ref{}, false
	}
	return r.st, r.ref, true
}

// Dir implements tree.StatCache.
func (c *Cache) Dir(path string) (tree.Ref, int, bool) {
	r, ok := c.old.find(path)
	if !ok || !r.dir {
		return tree.Ref{}, 0, false
	}
	return r.ref, r.entries, true
}

// SetFile implements tree.StatCache. Racy stat data is not recorded.
func (c *Cache) SetFile(path string, st tree.FileStat, ref tree.Ref) {
	if c.f == nil || Racy(st, c.start) {
		return
	}
	c.set(pathRecord{path, record{st: st, ref: ref}})
}

// SetDir implements tree.StatCache.
func (c *Cache) SetDir(path string, entries int, ref tree.Ref) {
	if c.f == nil {
		return
	}
	c.set(pathRecord{path, record{dir: true, entries: entries, ref: ref}})
}

// set records r for this build: as a mark on the old record if that is
// the same, else in next. (A builder sets each path once; were one set
// twice, the record in next would win.)
func (c *Cache) set(r pathRecord) {
	if i := c.old.index(r.path); i >= 0 {
		bit := uint64(1) << (i % 64)
		switch {
		case c.kept[i/64]&bit == 0 && c.old.recs[i].record.same(r.record):
			c.kept[i/64] |= bit
			c.nKept++
			return
		case c.kept[i/64]&bit != 0 && !c.old.recs[i].record.same(r.record):
			c.kept[i/64] &^= bit // set again, differently
			c.nKept--
		}
	}
	if c.nKept+len(c.next) < MaxEntries {
		c.next = append(c.next, r)
	}
}

// same reports whether r and o record the same thing.
func (r record) same(o record) bool {
	return r.dir == o.dir && r.st == o.st && r.entries == o.entries && r.ref.Equal(o.ref)
}

// index returns the position of path's record, -1 if there is none. A
// record is set right after it was looked up (a file's), or after its
// directory's entries (a directory's): the one after the last lookup is
// tried first.
func (rs *records) index(path string) int { return rs.search(path, rs.hint-1) }

// Racy reports whether stat data st cannot vouch for content read after
// start (ns, as the filesystem stamps times): its mtime or ctime is not
// strictly older than start. A file whose times are whole seconds lives
// on a filesystem that keeps no finer times (or one as coarse as FAT's 2
// s), so it is compared with start rounded down to the second, less 2 s.
func Racy(st tree.FileStat, start int64) bool {
	t := max(st.Mtime, st.Ctime)
	if st.Mtime%1e9 == 0 && st.Ctime%1e9 == 0 {
		return t >= (start/1e9-2)*1e9
	}
	return t >= start
}

// Save writes the records of this build to the cache file, in place:
// over the old bytes, then cut to the new length. A file that is read
// while being written, or left half written by a crash, fails its
// checksum and is ignored (it costs the next build reads, as a missing
// cache does); writing in place spares each commit creating a file,
// which on a busy filesystem costs more than the write. The file is
// written through a small buffer, not built whole in memory first: a
// short process pays for fresh memory in page faults. A cache that
// would exceed MaxSize is not written, and the old file is removed.
func (c *Cache) Save() error {
	if c.f == nil {
		return nil
	}
	f := c.f
	c.f = nil
	w := &fileWriter{f: f, buf: make([]byte, 0, 64<<10)}
	encodeTo(w, c.key, c.records())
	err := w.err
	if w.off > MaxSize {
		f.Close()
		if err := cachedir.Remove(c.path); err != nil {
			return fmt.Errorf("remove stat cache: %w", err)
		}
		return nil
	}
	if err == nil {
		err = f.Truncate(w.off)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// Half written: remove it rather than leave it to be read.
		_ = cachedir.Remove(c.path)
		return fmt.Errorf("write stat cache: %w", err)
	}
	if c.fresh {
		dir(filepath.Dir(c.path)).Prune()
	}
	return nil
}

// records returns this build's records in path order, with no path
// twice: the old records kept, merged with next (sorted), next's record
// winning for a path in both.
func (c *Cache) records() func(yield func(pathRecord) bool) {
	next := sortRecords(c.next)
	return func(yield func(pathRecord) bool) {
		rest := next
		for i, r := range c.old.recs {
			if c.kept[i/64]&(1<<(i%64)) == 0 {
				continue
			}
			for len(rest) > 0 && rest[0].path < r.path {
				if !yield(rest[0]) {
					return
				}
				rest = rest[1:]
			}
			if len(rest) > 0 && rest[0].path == r.path {
				continue // set again, differently: next's comes in its turn
			}
			if !yield(r) {
				return
			}
		}
		for _, r := range rest {
			if !yield(r) {
				return
			}
		}
	}
}

// fileWriter writes a file from offset 0 through a buffer; it stops
// writing at the first error, or once the file would pass MaxSize (off
// goes on counting).
type fileWriter struct {
	f   *os.File
	buf []byte
	off int64
	err error
}

func (w *fileWriter) buffer() *[]byte { return &w.buf }

func (w *fileWriter) flush() {
	if w.err == nil && w.off+int64(len(w.buf)) <= MaxSize {
		_, w.err = w.f.WriteAt(w.buf, w.off)
	}
	w.off += int64(len(w.buf))
	w.buf = w.buf[:0]
}

// dir is the cache directory holding path's cache files, bounded by
// MaxDirBytes.
func dir(path string) cachedir.Dir {
	return cachedir.Dir{Path: path, Suffix: suffix, MaxBytes: MaxDirBytes}
}

// Discard drops this build's records (the commit did not happen). The
// old cache file stays as it was.
func (c *Cache) Discard() {
	if c.f != nil {
		c.f.Close()
		c.f = nil
		c.removeFresh()
	}
}

// removeFresh removes the empty cache file that Open created, if there
// was none before.
func (c *Cache) removeFresh() {
	if c.fresh {
		_ = cachedir.Remove(c.path)
	}
}

// sortRecords sorts recs by path in place and drops all but the last
// record set for a path.
func sortRecords(recs []pathRecord) []pathRecord {
	slices.SortStableFunc(recs, func(a, b pathRecord) int { return strings.Compare(a.path, b.path) })
	out := recs[:0]
	for i, r := range recs {
		if i+1 < len(recs) && recs[i+1].path == r.path {
			continue
		}
		out = append(out, r)
	}
	return out
}

// encode returns the file form of recs, which are sorted by path with
// no path twice: magic, version, key, records in path order, then the
// BLAKE3 hash of all that.
func encode(key string, recs []pathRecord) []byte {
	w := &sliceWriter{}
	encodeTo(w, key, slices.Values(recs))
	return w.out
}

// writer is where encodeTo puts a cache file: a buffer it appends to,
// and flush, which takes what the buffer holds (and may empty it).
type writer interface {
	buffer() *[]byte
	flush()
}

// sliceWriter keeps a whole cache file in memory.
type sliceWriter struct{ buf, out []byte }

func (w *sliceWriter) buffer() *[]byte { return &w.buf }
func (w *sliceWriter) flush()          { w.out, w.buf = append(w.out, w.buf...), w.buf[:0] }

// encodeTo writes the file form of recs (in path order, no path twice)
// to w: magic, version, key, their count, the records, then the BLAKE3
// hash of all that. recs are gone over twice: counted, then written.
func encodeTo(w writer, key string, recs func(func(pathRecord) bool)) {
	n := 0
	for range recs {
		n++
	}
	h := cas.NewHash()
	buf := w.buffer()
	pass := func() {
		h.Write(*buf)
		w.flush()
	}
	*buf = append(*buf, magic...)
	*buf = append(*buf, version)
	*buf = appendBytes(*buf, key)
	*buf = binary.AppendUvarint(*buf, uint64(n))
	for r := range recs {
		*buf = appendRecord(*buf, r)
		if len(*buf) >= 32<<10 {
			pass()
		}
	}
	pass()
	*buf = h.Sum(*buf)
	w.flush()
}

// appendRecord appends the file form of one record.
func appendRecord(out []byte, r pathRecord) []byte {
	out = appendBytes(out, r.path)
	if r.dir {
		out = append(out, 'd')
		out = binary.AppendUvarint(out, uint64(r.entries))
	} else {
		out = append(out, 'f')
		out = binary.AppendVarint(out, r.st.Size)
		out = binary.AppendVarint(out, r.st.Mtime)
		out = binary.AppendVarint(out, r.st.Ctime)
		out = binary.AppendUvarint(out, r.st.Inode)
		out = binary.AppendUvarint(out, r.st.Dev)
		out = binary.AppendUvarint(out, uint64(r.st.Mode))
	}
	return tree.AppendRef(out, r.ref)
}

func appendBytes(out []byte, s string) []byte {
	out = binary.AppendUvarint(out, uint64(len(s)))
	return append(out, s...)
}

// errBad is the error of every malformed cache file.
var errBad = errors.New("malformed stat cache")

// decode parses a cache file, checking everything encode guarantees.
func decode(data []byte) (key string, recs []pathRecord, err error) {
	body, err := cachedir.Unseal(data, magic, version)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %v", errBad, err)
	}
	return decodeBody(body)
}

// decodeBody parses what follows the version byte, up to the checksum.
func decodeBody(body []byte) (key string, recs []pathRecord, err error) {
	// Paths are slices of one copy of the body, not one string each.
	text := string(body)
	d := newDecoder(body)
	key = string(d.Bytes(maxKey))
	n := d.Uvarint(MaxEntries)
	// A record takes at least 4 bytes (path length, kind, a varint and
	// a ref's kind), so what is left of the file bounds n.
	recs = make([]pathRecord, 0, min(n, uint64(len(d.P)/4)))
	prev := ""
	for i := uint64(0); i < n && d.Err == nil; i++ {
		b := d.Bytes(maxPath)
		end := len(body) - len(d.P)
		p := text[end-len(b) : end]
		if i > 0 && p <= prev {
			d.Fail("paths out of order")
		}
		prev = p
		var r record
		switch d.Byte() {
		case 'd':
			r.dir = true
			r.entries = int(d.Uvarint(1<<31 - 1))
		case 'f':
			r.st.Size = d.Varint()
			r.st.Mtime = d.Varint()
			r.st.Ctime = d.Varint()
			r.st.Inode = d.Uvarint(1<<64 - 1)
			r.st.Dev = d.Uvarint(1<<64 - 1)
			r.st.Mode = uint32(d.Uvarint(1<<32 - 1))
			if r.st.Size < 0 {
				d.Fail("negative size")
			}
		default:
			d.Fail("bad record kind")
		}
		if d.Err == nil {
			var rest []byte
			r.ref, rest, d.Err = tree.ReadRef(d.P, "stat cache")
			d.P = rest
		}
		recs = append(recs, pathRecord{p, r})
	}
	if d.Err == nil && len(d.P) != 0 {
		d.Fail("trailing bytes")
	}
	if d.Err != nil {
		return "", nil, d.Err
	}
	return key, recs, nil
}

// decoder reads the file's fields; its faults wrap errBad.
type decoder struct{ wire.Reader }

func newDecoder(p []byte) *decoder {
	return &decoder{wire.Reader{P: p, Fault: func(msg string) error { return fmt.Errorf("%w: %s", errBad, msg) }}}
}
