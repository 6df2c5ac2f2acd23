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
//
// A head is kept in two files. Most of an index changes rarely (a large
// first step, the packs of compaction), so it goes into a base file
// (FileName's name with ".base" before its suffix) that the head file
// names by checksum, and each save writes the head file alone, with only
// the objects the base lacks, while the base still describes objects of
// the head's layout; only then is the base written again, whole. A
// commit thus writes a few KB of cache instead of the whole index
// (issue 14, target 3). A head file whose base is missing or is not the
// one it names is ignored like any bad file.
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
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/internal/cachedir"
	"github.com/cairnlog/cairn/internal/wire"
	"github.com/cairnlog/cairn/manifest"
)

// Format and bounds of a cache file.
const (
	magic   = "CRHC"
	version = 2
	// baseMagic and baseVersion start a base file.
	baseMagic   = "CRHB"
	baseVersion = 1
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
	baseInfix   = ".base"
	// MaxDirBytes bounds the cache files of one directory together:
	// when a new one pushes them past it, the least recently written
	// ones are removed (a removed head costs its session's next commit
	// the reads it would have saved).
	MaxDirBytes = 256 << 20
)

// Head is what a cache file holds: the encoded manifest of a session's
// head step, its id (the hash of those bytes), its number, the stamp of
// the session's marker when it was saved (see manifest.Repo.SessionStamp),
// and the writer's index over the head's layout, its objects in key
// order.
//
// Base is the base file the head was loaded with (nil for a head not
// loaded from a cache file): Save writes the head file alone while that
// base still describes objects of the head's layout.
type Head struct {
	Number   uint64
	Stamp    string
	Manifest []byte
	ID       cas.ID
	Objects  []manifest.IndexObject
	Base     *Base
}

// Base identifies a base file: its checksum and the objects it holds.
type Base struct {
	sum     cas.ID
	objects []baseObject
}

// baseObject is an object of a base file: its key, size and blob count.
type baseObject struct {
	key     string
	bytes   int64
	entries int
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
	k, h, baseSum, err := decode(data)
	if err != nil {
		return nil, err.Error()
	}
	if k != key {
		return nil, "written for another store or session"
	}
	if baseSum == (cas.ID{}) {
		return h, ""
	}
	base, err := cachedir.Read(basePath(path), MaxSize)
	if err != nil {
		return nil, "base file: " + err.Error()
	}
	bk, objs, err := decodeBase(base)
	switch {
	case err != nil:
		return nil, "base file: " + err.Error()
	case bk != key:
		return nil, "base file written for another store or session"
	case !bytes.Equal(base[len(base)-cas.IDSize:], baseSum[:]):
		return nil, "base file is not the one the head names"
	}
	merged, ok := mergeObjects(objs, h.Objects)
	if !ok {
		return nil, "base file and head name one object twice or too many blobs"
	}
	h.Base = &Base{sum: baseSum, objects: summarize(objs)}
	h.Objects = merged
	return h, ""
}

// basePath returns the base file beside the head file at path.
func basePath(path string) string {
	return strings.TrimSuffix(path, suffix) + baseInfix + suffix
}

// mergeObjects merges two lists of objects in key order into one, which
// must hold no key twice and at most MaxEntries blobs.
func mergeObjects(a, b []manifest.IndexObject) ([]manifest.IndexObject, bool) {
	out := make([]manifest.IndexObject, 0, len(a)+len(b))
	total := 0
	for len(a) > 0 || len(b) > 0 {
		var o manifest.IndexObject
		switch {
		case len(b) == 0 || len(a) > 0 && a[0].Key < b[0].Key:
			o, a = a[0], a[1:]
		case len(a) == 0 || b[0].Key < a[0].Key:
			o, b = b[0], b[1:]
		default:
			return nil, false
		}
		total += len(o.Entries)
		out = append(out, o)
	}
	return out, total <= MaxEntries && len(out) <= MaxObjects
}

// summarize returns what a Base records of objects.
func summarize(objs []manifest.IndexObject) []baseObject {
	out := make([]baseObject, len(objs))
	for i, o := range objs {
		out[i] = baseObject{key: o.Key, bytes: o.Bytes, entries: len(o.Entries)}
	}
	return out
}

// Save writes h to the cache file at path for key, atomically (a
// temporary file renamed over the old one), and returns the base file the
// head file now names, for the next Save of a later head (nil if none).
// It writes the head file alone if h.Base still describes objects of h
// and the objects it lacks are few, else a new base file of all h's
// objects first. It keeps a valid file for the same key and stamp that
// names a newer step: of two processes committing one after the other,
// the later step wins even if its process saves first. A head too large
// to cache removes the file instead.
//
// Two processes saving at once can leave a head file beside a base file
// it does not name: the next Load then ignores it, as any bad file.
func Save(path, key string, h *Head) (*Base, error) {
	// The old file is read whole and its checksum checked only if its
	// header, read first, names a newer step: a damaged header can
	// then cost that read, and never keeps a bad file.
	prefix, err := readPrefix(path, maxHeader)
	if err == nil && newer(prefix, key, h) {
		if old, err := cachedir.Read(path, MaxSize); err == nil && newerVerified(old, key, h) {
			return nil, nil
		}
	}
	fresh := errors.Is(err, os.ErrNotExist)
	base, own, reuse := h.Base, []manifest.IndexObject(nil), false
	if base != nil {
		own, reuse = base.rest(h.Objects)
	}
	if !reuse {
		whole, ok := encodeBase(key, h.Objects)
		if !ok {
			return nil, removeBoth(path)
		}
		if err := cachedir.WriteFile(basePath(path), whole); err != nil {
			return nil, fmt.Errorf("write head cache: %w", err)
		}
		base, own = &Base{objects: summarize(h.Objects)}, nil
		copy(base.sum[:], whole[len(whole)-cas.IDSize:])
	} else {
		// The base goes on serving: keep it as recent as its head, so
		// that pruning the least recently written files does not take
		// it first.
		now := time.Now()
		_ = os.Chtimes(basePath(path), now, now)
	}
	data, ok := encode(key, h, base, own)
	if !ok {
		return nil, removeBoth(path)
	}
	if err := cachedir.WriteFile(path, data); err != nil {
		return nil, fmt.Errorf("write head cache: %w", err)
	}
	if fresh {
		dir(filepath.Dir(path)).Prune()
	}
	return base, nil
}

// removeBoth removes the head file at path and its base file.
func removeBoth(path string) error {
	return errors.Join(Remove(path), Remove(basePath(path)))
}

// maxOwnEntries is how many blobs a head file holds beside its base
// before Save writes a new base: the objects committed since the base was
// written, until a compaction merges some of the base's away.
const maxOwnEntries = 4096

// rest returns the objects of objs that b does not hold, if every object
// of b is in objs (same key, size and blob count: objects never change,
// so they are the same objects) and the rest hold at most maxOwnEntries
// blobs; ok is false otherwise. objs are in key order.
func (b *Base) rest(objs []manifest.IndexObject) (own []manifest.IndexObject, ok bool) {
	bo := b.objects
	entries := 0
	for _, o := range objs {
		if len(bo) > 0 && bo[0].key == o.Key {
			if bo[0].bytes != o.Bytes || bo[0].entries != len(o.Entries) {
				return nil, false
			}
			bo = bo[1:]
			continue
		}
		if len(bo) > 0 && bo[0].key < o.Key {
			return nil, false // gone from the layout
		}
		entries += len(o.Entries)
		own = append(own, o)
	}
	return own, len(bo) == 0 && entries <= maxOwnEntries
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

// Remove deletes the cache file at path, if any. (A base file left
// behind names no head: a later Save replaces it, Prune removes it.)
func Remove(path string) error {
	if err := cachedir.Remove(path); err != nil {
		return fmt.Errorf("remove head cache: %w", err)
	}
	return nil
}

// encode returns the head file of h beside base (nil for none), holding
// objects own: magic, version, key, step number, stamp, manifest, id, the
// base's checksum (zero for none), own in key order with their entries,
// then the BLAKE3 hash of all that. It reports false if h breaks a bound.
func encode(key string, h *Head, base *Base, own []manifest.IndexObject) ([]byte, bool) {
	if len(key) > maxKey || len(h.Stamp) > maxStamp || len(h.Manifest) > MaxManifest || len(h.Objects) > MaxObjects {
		return nil, false
	}
	var sum cas.ID
	if base != nil {
		sum = base.sum
	}
	out := make([]byte, 0, min(objectsSize(own)+len(magic)+1+3*binary.MaxVarintLen64+len(key)+len(h.Stamp)+len(h.Manifest)+3*cas.IDSize, MaxSize+cas.IDSize))
	out = append(out, magic...)
	out = append(out, version)
	out = appendBytes(out, []byte(key))
	out = binary.AppendUvarint(out, h.Number)
	out = appendBytes(out, []byte(h.Stamp))
	out = appendBytes(out, h.Manifest)
	out = append(out, h.ID[:]...)
	out = append(out, sum[:]...)
	return seal(out, own)
}

// encodeBase returns the base file of objs: magic, version, key, the
// objects in key order with their entries, then the BLAKE3 hash of all
// that. It reports false if objs break a bound.
func encodeBase(key string, objs []manifest.IndexObject) ([]byte, bool) {
	if len(key) > maxKey || len(objs) > MaxObjects {
		return nil, false
	}
	out := make([]byte, 0, min(objectsSize(objs)+len(baseMagic)+1+binary.MaxVarintLen64+len(key)+cas.IDSize, MaxSize+cas.IDSize))
	out = append(out, baseMagic...)
	out = append(out, baseVersion)
	out = appendBytes(out, []byte(key))
	return seal(out, objs)
}

// objectsSize bounds the encoding of objs, so that a buffer sized up
// front holds it (an entry is an id and three varints, mostly short): a
// large index would otherwise be copied at each doubling.
func objectsSize(objs []manifest.IndexObject) int {
	size := binary.MaxVarintLen64
	for _, o := range objs {
		size += 3*binary.MaxVarintLen64 + len(o.Key) + len(o.Entries)*(cas.IDSize+8)
	}
	return size
}

// seal appends objs (in key order, with their entries) and then the
// BLAKE3 hash of everything to out. It reports false if objs are out of
// order or break a bound.
func seal(out []byte, objs []manifest.IndexObject) ([]byte, bool) {
	out = binary.AppendUvarint(out, uint64(len(objs)))
	total := 0
	prev := ""
	for i, o := range objs {
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

// decode parses a head file, checking everything encode guarantees, and
// returns its key, its head (the objects beside the base only) and the
// checksum of the base file it names (zero for none).
func decode(data []byte) (string, *Head, cas.ID, error) {
	body, err := verify(data, magic, version)
	if err != nil {
		return "", nil, cas.ID{}, err
	}
	return decodeBody(body)
}

// verify checks a file's magic, version and checksum, and returns what
// lies between the version byte and the checksum.
func verify(data []byte, m string, v byte) ([]byte, error) {
	body, err := cachedir.Unseal(data, m, v)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errBad, err)
	}
	return body, nil
}

// decodeHeader checks a head file's checksum and returns its key, step
// number and stamp without decoding the index.
func decodeHeader(data []byte) (key string, number uint64, stamp string, err error) {
	body, err := verify(data, magic, version)
	if err != nil {
		return "", 0, "", err
	}
	d := newDecoder(body)
	key = string(d.Bytes(maxKey))
	number = d.Uvarint(1<<63 - 1)
	stamp = string(d.Bytes(maxStamp))
	return key, number, stamp, d.Err
}

// decodeBody parses what follows a head file's version byte, up to the
// checksum.
func decodeBody(body []byte) (string, *Head, cas.ID, error) {
	const maxInt = 1<<63 - 1
	d := newDecoder(body)
	key := string(d.Bytes(maxKey))
	h := &Head{Number: d.Uvarint(maxInt)}
	h.Stamp = string(d.Bytes(maxStamp))
	h.Manifest = bytes.Clone(d.Bytes(MaxManifest))
	copy(h.ID[:], d.Take(cas.IDSize))
	var base cas.ID
	copy(base[:], d.Take(cas.IDSize))
	h.Objects = d.objects()
	if d.Err != nil {
		return "", nil, cas.ID{}, d.Err
	}
	return key, h, base, nil
}

// decodeBase parses a base file, checking everything encodeBase
// guarantees, and returns its key and objects.
func decodeBase(data []byte) (string, []manifest.IndexObject, error) {
	body, err := verify(data, baseMagic, baseVersion)
	if err != nil {
		return "", nil, err
	}
	return decodeBaseBody(body)
}

// decodeBaseBody parses what follows a base file's version byte, up to
// the checksum.
func decodeBaseBody(body []byte) (string, []manifest.IndexObject, error) {
	d := newDecoder(body)
	key := string(d.Bytes(maxKey))
	objs := d.objects()
	if d.Err != nil {
		return "", nil, d.Err
	}
	return key, objs, nil
}

// objects reads the objects that end a file, as seal wrote them, and
// checks that nothing follows them.
func (d *decoder) objects() []manifest.IndexObject {
	const maxInt = 1<<63 - 1
	n := d.Uvarint(MaxObjects)
	var objs []manifest.IndexObject
	if d.Err == nil {
		objs = make([]manifest.IndexObject, 0, min(n, 1024))
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
		objs = append(objs, o)
	}
	if d.Err == nil && len(d.P) != 0 {
		d.Fail("trailing bytes")
	}
	return objs
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
// cache is stale, as if another machine had written the step. The
// in-flight mark of this process's own pid is the caller's own (Begin),
// not the holder's: a holder with this pid is another process of the
// same host name in another pid namespace (two containers on the host's
// network), or a writer of this process, and shares the cache only if
// it saved its head.
func Shared(path, key string, pid int, n uint64) bool {
	if name := inflight(path, pid); pid != os.Getpid() {
		if _, err := os.Stat(name); err == nil {
			if alive(pid) {
				return true
			}
			os.Remove(name)
		}
	}
	// The head file's own header says which step it saved; its base
	// does not matter here.
	data, err := cachedir.Read(path, MaxSize)
	if err != nil {
		return false
	}
	k, number, _, err := decodeHeader(data)
	return err == nil && k == key && number >= n
}

func inflight(path string, pid int) string {
	return fmt.Sprintf("%s.%d.inflight", path, pid)
}
