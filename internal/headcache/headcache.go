// Package headcache keeps a session's head, as the last commit on this
// machine left it, in a local file: the head's manifest and its writer's
// index (the objects of its layout and the blobs in them), so that the
// next commit in a fresh process writes its step without reading the
// store (one PUT instead of a LIST and a GET per object of the layout).
//
// The cache is a hint, never an authority. A file that cannot be read, is
// truncated, has the wrong version, checksum or key, or breaks any bound
// is ignored, and the commit reads the store as it would without a cache.
// What keeps a stale cache from naming a wrong parent is the store, not
// this file: the step slot above the cached head is created with a
// conditional put, so if anyone wrote there (another writer, or gc's
// tombstone fencing a removed session) the commit loses the slot and
// reads the real head (see cairn's Session.Commit).
package headcache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/internal/cachedir"
	"github.com/cairnlog/cairn/internal/wire"
	"github.com/cairnlog/cairn/manifest"
)

// Format and bounds of a cache file.
const (
	magic   = "CRHC"
	version = 1
	// MaxSize bounds a cache file; a larger head is not cached, and a
	// larger file is not read.
	MaxSize = 64 << 20
	// MaxObjects bounds the objects of a cached layout.
	MaxObjects = 1 << 16
	// MaxEntries bounds the blobs of a cached index, all objects together.
	MaxEntries = 1 << 20
	// MaxManifest bounds a cached manifest.
	MaxManifest = 16 << 20
	maxKey      = 1 << 13
	maxObjKey   = 1 << 10
	maxStamp    = 1 << 8
	suffix      = ".head"
	// MaxDirBytes bounds the cache files of one directory together:
	// when a new one pushes them past it, the least recently written
	// ones are removed (a removed head costs its session's next commit
	// the reads it would have saved).
	MaxDirBytes = 256 << 20
)

// Head is what a cache file holds: the encoded manifest of a session's
// head step, its id (the hash of those bytes), its number, the stamp of
// the session's marker when it was saved (see manifest.Repo.SessionStamp),
// and the writer's index over the head's layout.
type Head struct {
	Number   uint64
	Stamp    string
	Manifest []byte
	ID       cas.ID
	Objects  []manifest.IndexObject
}

// FileName returns the name of the cache file for key: a hash of it, so
// that keys (store URLs, session names) never become file names.
func FileName(key string) string { return cachedir.Name(key, suffix) }

// Load reads the cache file at path if it was written for key. It never
// fails: it returns nil and the reason when there is no usable head
// ("" when there is no file).
func Load(path, key string) (*Head, string) {
	data, err := cachedir.Read(path, MaxSize)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ""
	}
	if err != nil {
		return nil, err.Error()
	}
	k, h, err := decode(data)
	if err != nil {
		return nil, err.Error()
	}
	if k != key {
		return nil, "written for another store or session"
	}
	return h, ""
}

// Save writes h to the cache file at path for key, atomically (a
// temporary file renamed over the old one). It keeps a valid file for the
// same key and stamp that names a newer step: of two processes committing
// one after the other, the later step wins even if its process saves
// first. A head too large to cache removes the file instead.
func Save(path, key string, h *Head) error {
	data, ok := encode(key, h)
	if !ok {
		return Remove(path)
	}
	// The old file is read whole and its checksum checked only if its
	// header, read first, names a newer step: a damaged header can
	// then cost that read, and never keeps a bad file.
	prefix, err := readPrefix(path, maxHeader)
	if err == nil && newer(prefix, key, h) {
		if old, err := cachedir.Read(path, MaxSize); err == nil && newerVerified(old, key, h) {
			return nil
		}
	}
	fresh := errors.Is(err, os.ErrNotExist)
	if err := cachedir.WriteFile(path, data); err != nil {
		return fmt.Errorf("write head cache: %w", err)
	}
	if fresh {
		dir(filepath.Dir(path)).Prune()
	}
	return nil
}

// maxHeader bounds the header of a cache file: magic, version, key,
// step number and stamp.
const maxHeader = len(magic) + 1 + 3*binary.MaxVarintLen64 + maxKey + maxStamp

// readPrefix reads at most n bytes from the start of the file at path.
func readPrefix(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	m, err := io.ReadFull(f, buf)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return buf[:m], err
}

// newer reports whether the header at the start of prefix, not yet
// verified, names a step of h's session, under h's stamp, above h's.
func newer(prefix []byte, key string, h *Head) bool {
	if len(prefix) < len(magic)+1 || string(prefix[:len(magic)]) != magic || prefix[len(magic)] != version {
		return false
	}
	d := newDecoder(prefix[len(magic)+1:])
	k := d.Bytes(maxKey)
	number := d.Uvarint(1<<63 - 1)
	stamp := d.Bytes(maxStamp)
	return d.Err == nil && string(k) == key && string(stamp) == h.Stamp && number > h.Number
}

// newerVerified is newer for a whole file, its checksum checked.
func newerVerified(data []byte, key string, h *Head) bool {
	k, number, stamp, err := decodeHeader(data)
	return err == nil && k == key && stamp == h.Stamp && number > h.Number
}

// dir is the cache directory holding path's cache files: bounded by
// MaxDirBytes, and rid of the in-flight files of processes that no
// longer exist.
func dir(path string) cachedir.Dir {
	return cachedir.Dir{Path: path, Suffix: suffix, MaxBytes: MaxDirBytes, Stale: deadInflight}
}

// deadInflight reports whether name is the in-flight file of a process
// that no longer exists.
func deadInflight(name string) bool {
	rest, ok := strings.CutSuffix(name, ".inflight")
	if !ok {
		return false
	}
	f := strings.Split(rest, ".")
	pid, err := strconv.Atoi(f[len(f)-1])
	return err == nil && !alive(pid)
}

// Remove deletes the cache file at path, if any.
func Remove(path string) error {
	if err := cachedir.Remove(path); err != nil {
		return fmt.Errorf("remove head cache: %w", err)
	}
	return nil
}

// encode returns the file form of h: magic, version, key, step number,
// manifest, id, the objects in key order with their entries, then the
// BLAKE3 hash of all that. It reports false if h breaks a bound.
func encode(key string, h *Head) ([]byte, bool) {
	if len(key) > maxKey || len(h.Stamp) > maxStamp || len(h.Manifest) > MaxManifest || len(h.Objects) > MaxObjects {
		return nil, false
	}
	// Sized up front (an entry is an id and three varints, mostly short):
	// a large index would otherwise be copied at each doubling.
	size := len(magic) + 1 + 3*binary.MaxVarintLen64 + len(key) + len(h.Stamp) + len(h.Manifest) + 2*cas.IDSize
	for _, o := range h.Objects {
		size += 3*binary.MaxVarintLen64 + len(o.Key) + len(o.Entries)*(cas.IDSize+8)
	}
	out := make([]byte, 0, min(size, MaxSize+cas.IDSize))
	out = append(out, magic...)
	out = append(out, version)
	out = appendBytes(out, []byte(key))
	out = binary.AppendUvarint(out, h.Number)
	out = appendBytes(out, []byte(h.Stamp))
	out = appendBytes(out, h.Manifest)
	out = append(out, h.ID[:]...)
	out = binary.AppendUvarint(out, uint64(len(h.Objects)))
	total := 0
	prev := ""
	for i, o := range h.Objects {
		if len(o.Key) > maxObjKey || o.Bytes < 0 || (i > 0 && o.Key <= prev) {
			return nil, false
		}
		prev = o.Key
		total += len(o.Entries)
		if total > MaxEntries {
			return nil, false
		}
		out = appendBytes(out, []byte(o.Key))
		out = binary.AppendUvarint(out, uint64(o.Bytes))
		out = binary.AppendUvarint(out, uint64(len(o.Entries)))
		for _, e := range o.Entries {
			if e.Offset < 0 || e.StoredLen < 0 || e.RawLen < 0 {
				return nil, false
			}
			out = append(out, e.ID[:]...)
			out = binary.AppendUvarint(out, uint64(e.Offset))
			out = binary.AppendUvarint(out, uint64(e.StoredLen))
			out = binary.AppendUvarint(out, uint64(e.RawLen))
		}
		if len(out) > MaxSize {
			return nil, false
		}
	}
	sum := cas.Sum(out)
	out = append(out, sum[:]...)
	return out, len(out) <= MaxSize
}

func appendBytes(out, b []byte) []byte {
	out = binary.AppendUvarint(out, uint64(len(b)))
	return append(out, b...)
}

// errBad is the error of every malformed cache file.
var errBad = errors.New("malformed head cache")

// decode parses a cache file, checking everything encode guarantees.
func decode(data []byte) (string, *Head, error) {
	if len(data) < len(magic)+1+cas.IDSize || string(data[:len(magic)]) != magic {
		return "", nil, fmt.Errorf("%w: bad magic", errBad)
	}
	if data[len(magic)] != version {
		return "", nil, fmt.Errorf("%w: version %d", errBad, data[len(magic)])
	}
	body := data[:len(data)-cas.IDSize]
	if sum := cas.Sum(body); !bytes.Equal(sum[:], data[len(body):]) {
		return "", nil, fmt.Errorf("%w: checksum mismatch", errBad)
	}
	return decodeBody(body[len(magic)+1:])
}

// decodeHeader checks a cache file's checksum and returns its key, step
// number and stamp without decoding the index.
func decodeHeader(data []byte) (key string, number uint64, stamp string, err error) {
	if len(data) < len(magic)+1+cas.IDSize || string(data[:len(magic)]) != magic || data[len(magic)] != version {
		return "", 0, "", fmt.Errorf("%w: bad magic or version", errBad)
	}
	body := data[:len(data)-cas.IDSize]
	if sum := cas.Sum(body); !bytes.Equal(sum[:], data[len(body):]) {
		return "", 0, "", fmt.Errorf("%w: checksum mismatch", errBad)
	}
	d := newDecoder(body[len(magic)+1:])
	key = string(d.Bytes(maxKey))
	number = d.Uvarint(1<<63 - 1)
	stamp = string(d.Bytes(maxStamp))
	return key, number, stamp, d.Err
}

// decodeBody parses what follows the version byte, up to the checksum.
func decodeBody(body []byte) (string, *Head, error) {
	const maxInt = 1<<63 - 1
	d := newDecoder(body)
	key := string(d.Bytes(maxKey))
	h := &Head{Number: d.Uvarint(maxInt)}
	h.Stamp = string(d.Bytes(maxStamp))
	h.Manifest = bytes.Clone(d.Bytes(MaxManifest))
	copy(h.ID[:], d.Take(cas.IDSize))
	n := d.Uvarint(MaxObjects)
	if d.Err == nil {
		h.Objects = make([]manifest.IndexObject, 0, min(n, 1024))
	}
	total := uint64(0)
	prev := ""
	for i := uint64(0); i < n && d.Err == nil; i++ {
		o := manifest.IndexObject{Key: string(d.Bytes(maxObjKey))}
		if i > 0 && o.Key <= prev {
			d.Fail("objects out of order")
		}
		prev = o.Key
		o.Bytes = int64(d.Uvarint(maxInt))
		k := d.Uvarint(MaxEntries)
		total += k
		if total > MaxEntries {
			d.Fail("too many entries")
		}
		if d.Err == nil {
			// An entry takes at least an id and three one-byte varints,
			// so what is left of the file bounds k.
			o.Entries = make([]pack.Entry, 0, min(k, uint64(len(d.P)/(cas.IDSize+3))))
		}
		for j := uint64(0); j < k && d.Err == nil; j++ {
			var e pack.Entry
			copy(e.ID[:], d.Take(cas.IDSize))
			e.Offset = int64(d.Uvarint(maxInt))
			e.StoredLen = int64(d.Uvarint(maxInt))
			e.RawLen = int64(d.Uvarint(maxInt))
			o.Entries = append(o.Entries, e)
		}
		h.Objects = append(h.Objects, o)
	}
	if d.Err == nil && len(d.P) != 0 {
		d.Fail("trailing bytes")
	}
	if d.Err != nil {
		return "", nil, d.Err
	}
	return key, h, nil
}

// decoder reads the file's fields; its faults wrap errBad.
type decoder struct{ wire.Reader }

func newDecoder(p []byte) *decoder {
	return &decoder{wire.Reader{P: p, Fault: func(msg string) error { return fmt.Errorf("%w: %s", errBad, msg) }}}
}

// Begin records that this process is committing the session whose cache
// file is path, until the returned function is called (after Save): a
// process that loses the step slot to this one then knows that the two
// share the cache and raced, rather than that its cache was stale. Best
// effort.
func Begin(path string) (end func()) {
	name := inflight(path, os.Getpid())
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return func() {}
	}
	f, err := os.Create(name)
	if err != nil {
		return func() {}
	}
	f.Close()
	return func() { os.Remove(name) }
}

// Shared reports whether process pid of this host shares the cache file
// at path and wrote step n (or a later one) of its session: it is still
// committing (Begin, and alive), or it saved a head at or above n for
// key. A process killed before it saved its head shares nothing: the
// cache is stale, as if another machine had written the step.
func Shared(path, key string, pid int, n uint64) bool {
	name := inflight(path, pid)
	if _, err := os.Stat(name); err == nil {
		if alive(pid) {
			return true
		}
		os.Remove(name)
	}
	h, _ := Load(path, key)
	return h != nil && h.Number >= n
}

func inflight(path string, pid int) string {
	return fmt.Sprintf("%s.%d.inflight", path, pid)
}
