// Package pack is the format of cairn's data objects: a step object (one
// step's manifest together with the new blobs of that step, so a step
// costs one PUT) and a compacted pack (blobs only).
//
// Layout, all integers unsigned varints unless noted:
//
//	magic    "CAIRNPK" + version byte (1)
//	kind     1 byte: 'S' step object, 'P' pack
//	mlen     length of the manifest section (0 in a pack)
//	manifest mlen bytes, opaque to this package
//	count    number of blobs
//	index    count × { id [32]byte, storedLen, rawLen }
//	data     the stored blobs back to back, in index order (see EncodeBlob)
//	trailer  BLAKE3-256 of every byte before it [32]byte
//
// The trailer lets a reader of the whole object detect any flipped byte,
// including in the index; every blob is also re-hashed when decoded.
package pack

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cairnlog/cairn/cas"
)

// Object kinds.
const (
	KindStep byte = 'S'
	KindPack byte = 'P'
)

const (
	magic   = "CAIRNPK"
	version = 1
	// MaxBlobs bounds the blob count of one object.
	MaxBlobs = 1 << 20
	// MaxManifestSize bounds the manifest section.
	MaxManifestSize = 16 << 20
)

// Entry locates one blob inside an object.
type Entry struct {
	ID        cas.ID
	Offset    int64 // of the stored blob, from the start of the object
	StoredLen int64
	RawLen    int64
}

// Builder collects the blobs of one object. The zero value is ready.
type Builder struct {
	ids  []cas.ID
	raw  []int64
	data [][]byte       // stored forms
	seen map[cas.ID]int // id -> position
	size int64
}

// Has reports whether the builder already holds id.
func (b *Builder) Has(id cas.ID) bool { _, ok := b.seen[id]; return ok }

// Blob returns the raw bytes of a blob the builder holds, decoded from
// its stored form; ok is false if the builder does not hold id.
func (b *Builder) Blob(id cas.ID) (raw []byte, ok bool, err error) {
	i, ok := b.seen[id]
	if !ok {
		return nil, false, nil
	}
	raw, err = DecodeBlob(b.data[i], id, int(b.raw[i]), "new blob "+id.Short())
	return raw, true, err
}

// Add adds a blob with its raw bytes; a duplicate id is ignored. It
// reports whether the blob was new.
func (b *Builder) Add(id cas.ID, raw []byte) bool {
	if b.Has(id) {
		return false
	}
	if b.seen == nil {
		b.seen = make(map[cas.ID]int)
	}
	b.seen[id] = len(b.ids)
	stored := EncodeBlob(nil, raw)
	b.ids = append(b.ids, id)
	b.raw = append(b.raw, int64(len(raw)))
	b.data = append(b.data, stored)
	b.size += int64(len(stored))
	return true
}

// AddStored adds a blob already in stored form (used when copying blobs
// between objects without recompressing).
func (b *Builder) AddStored(id cas.ID, rawLen int64, stored []byte) bool {
	if b.Has(id) {
		return false
	}
	if b.seen == nil {
		b.seen = make(map[cas.ID]int)
	}
	b.seen[id] = len(b.ids)
	b.ids = append(b.ids, id)
	b.raw = append(b.raw, rawLen)
	b.data = append(b.data, stored)
	b.size += int64(len(stored))
	return true
}

// Size returns the total stored size of the blobs added.
func (b *Builder) Size() int64 { return b.size }

// Merge adds the blobs of o, in o's order, as AddStored does, and
// returns how many were new.
func (b *Builder) Merge(o *Builder) int {
	n := 0
	for i, id := range o.ids {
		if b.AddStored(id, o.raw[i], o.data[i]) {
			n++
		}
	}
	return n
}

// Len returns the number of blobs added.
func (b *Builder) Len() int { return len(b.ids) }

// RawSize returns the total uncompressed size of the blobs added.
func (b *Builder) RawSize() int64 {
	var n int64
	for _, r := range b.raw {
		n += r
	}
	return n
}

// Build encodes the object with the given kind and manifest section and
// returns its bytes and the index of the blobs in it.
func (b *Builder) Build(kind byte, manifest []byte) ([]byte, []Entry) {
	hdr := b.header(nil, kind, manifest)
	out := make([]byte, 0, len(hdr)+int(b.size)+cas.IDSize)
	out = append(out, hdr...)
	entries := make([]Entry, len(b.ids))
	for i, d := range b.data {
		entries[i] = Entry{ID: b.ids[i], Offset: int64(len(out)), StoredLen: int64(len(d)), RawLen: b.raw[i]}
		out = append(out, d...)
	}
	sum := cas.Sum(out)
	out = append(out, sum[:]...)
	return out, entries
}

// header appends the object's header and index to dst.
func (b *Builder) header(dst []byte, kind byte, manifest []byte) []byte {
	dst = append(dst, magic...)
	dst = append(dst, version, kind)
	dst = binary.AppendUvarint(dst, uint64(len(manifest)))
	dst = append(dst, manifest...)
	dst = binary.AppendUvarint(dst, uint64(len(b.ids)))
	for i, id := range b.ids {
		dst = append(dst, id[:]...)
		dst = binary.AppendUvarint(dst, uint64(len(b.data[i])))
		dst = binary.AppendUvarint(dst, uint64(b.raw[i]))
	}
	return dst
}

// HeaderRoom returns the most bytes the header and index of a pack
// (KindPack, no manifest) of n blobs can take: the room BuildInPlace
// needs before the blobs.
func HeaderRoom(n int) int {
	return len(magic) + 2 + 2*binary.MaxVarintLen64 + n*(cas.IDSize+2*binary.MaxVarintLen64)
}

// BuildInPlace returns what Build(KindPack, nil) does, for a builder
// whose stored blobs were added, in order, as consecutive pieces of
// buf[room:]: it writes the header into the room just before the blobs
// and the trailer just after them (within cap(buf) if it can), so the
// blobs, most of a large pack's bytes, are not copied again. room must
// be at least HeaderRoom(b.Len()). The object returned shares buf. It
// panics if the blobs are not where it says.
func (b *Builder) BuildInPlace(buf []byte, room int) ([]byte, []Entry) {
	off := room
	for _, d := range b.data {
		if len(d) == 0 || off+len(d) > len(buf) || &d[0] != &buf[off] {
			panic("pack: BuildInPlace: the blobs are not back to back in buf")
		}
		off += len(d)
	}
	if off != len(buf) {
		panic("pack: BuildInPlace: buf holds more than the blobs")
	}
	// Encoded at the front of buf, then moved to end where the blobs
	// start: the room is no smaller than the header.
	hdr := b.header(buf[:0:room], KindPack, nil)
	if len(hdr) > room {
		panic("pack: BuildInPlace: less room than the header takes")
	}
	start := room - len(hdr)
	copy(buf[start:room], hdr)
	out := buf[start:]
	entries := make([]Entry, len(b.ids))
	at := int64(len(hdr))
	for i, d := range b.data {
		entries[i] = Entry{ID: b.ids[i], Offset: at, StoredLen: int64(len(d)), RawLen: b.raw[i]}
		at += int64(len(d))
	}
	sum := cas.Sum(out)
	out = append(out, sum[:]...)
	return out, entries
}

// Object is a parsed object.
type Object struct {
	Kind      byte
	Manifest  []byte
	Entries   []Entry
	data      []byte // the whole object
	name      string
	dataStart int64 // offset of the first blob, just past the index
}

// ErrShort reports a header that extends past the bytes given to
// ParseHeader; the caller should read more of the object.
var ErrShort = errors.New("pack header extends past the bytes read")

// Parse parses and verifies a whole object. name is used in errors.
func Parse(data []byte, name string) (*Object, error) {
	if len(data) < len(magic)+2+cas.IDSize {
		return nil, fmt.Errorf("%w: %s: %d bytes is too short for an object", cas.ErrCorrupt, name, len(data))
	}
	body, trailer := data[:len(data)-cas.IDSize], data[len(data)-cas.IDSize:]
	if err := cas.Verify(cas.ID(trailer), body, name); err != nil {
		return nil, err
	}
	o, err := ParseHeader(body, name)
	if err != nil {
		if errors.Is(err, ErrShort) {
			return nil, fmt.Errorf("%w: %s: truncated header", cas.ErrCorrupt, name)
		}
		return nil, err
	}
	end := o.dataStart
	for _, e := range o.Entries {
		if e.Offset+e.StoredLen > int64(len(body)) {
			return nil, fmt.Errorf("%w: %s: blob %s extends past the data", cas.ErrCorrupt, name, e.ID.Short())
		}
		end = e.Offset + e.StoredLen
	}
	if end != int64(len(body)) {
		return nil, fmt.Errorf("%w: %s: %d stray bytes after the data", cas.ErrCorrupt, name, int64(len(body))-end)
	}
	o.data = data
	return o, nil
}

// ParseHeader parses the header and index from a prefix of an object
// without verifying the trailer. It returns ErrShort if prefix ends
// inside the header.
func ParseHeader(prefix []byte, name string) (*Object, error) {
	corrupt := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", cas.ErrCorrupt, name, fmt.Sprintf(format, a...))
	}
	if len(prefix) < len(magic)+2 {
		return nil, ErrShort
	}
	if string(prefix[:len(magic)]) != magic {
		return nil, corrupt("bad magic")
	}
	if v := prefix[len(magic)]; v != version {
		return nil, corrupt("unsupported format version %d", v)
	}
	o := &Object{Kind: prefix[len(magic)+1], name: name}
	if o.Kind != KindStep && o.Kind != KindPack {
		return nil, corrupt("unknown object kind %q", o.Kind)
	}
	p := prefix[len(magic)+2:]
	uv := func(what string, max uint64) (uint64, error) {
		v, n := binary.Uvarint(p)
		if n == 0 {
			return 0, ErrShort
		}
		if n < 0 || v > max {
			return 0, corrupt("bad %s", what)
		}
		p = p[n:]
		return v, nil
	}
	mlen, err := uv("manifest length", MaxManifestSize)
	if err != nil {
		return nil, err
	}
	if uint64(len(p)) < mlen {
		return nil, ErrShort
	}
	o.Manifest, p = p[:mlen:mlen], p[mlen:]
	count, err := uv("blob count", MaxBlobs)
	if err != nil {
		return nil, err
	}
	entries := make([]Entry, 0, min(count, 4096))
	for i := uint64(0); i < count; i++ {
		if len(p) < cas.IDSize {
			return nil, ErrShort
		}
		var e Entry
		copy(e.ID[:], p)
		p = p[cas.IDSize:]
		sl, err := uv("stored length", MaxBlobSize+1024)
		if err != nil {
			return nil, err
		}
		rl, err := uv("raw length", MaxBlobSize)
		if err != nil {
			return nil, err
		}
		if sl == 0 {
			return nil, corrupt("blob %s has no codec byte", e.ID.Short())
		}
		e.StoredLen, e.RawLen = int64(sl), int64(rl)
		entries = append(entries, e)
	}
	off := int64(len(prefix) - len(p))
	o.dataStart = off
	for i := range entries {
		entries[i].Offset = off
		off += entries[i].StoredLen
	}
	o.Entries = entries
	return o, nil
}

// Stored returns the stored bytes of entry e of a whole parsed object.
func (o *Object) Stored(e Entry) []byte {
	return o.data[e.Offset : e.Offset+e.StoredLen]
}

// Blob decodes and verifies entry e of a whole parsed object.
func (o *Object) Blob(e Entry) ([]byte, error) {
	if o.data == nil {
		return nil, fmt.Errorf("read blob %s of %s: object was parsed from its header only", e.ID.Short(), o.name)
	}
	return DecodeBlob(o.Stored(e), e.ID, int(e.RawLen), fmt.Sprintf("blob %s in %s", e.ID.Short(), o.name))
}

// Size returns the size of the whole object, or 0 if only its header was parsed.
func (o *Object) Size() int64 { return int64(len(o.data)) }

// ManifestPrefix returns how many leading bytes of a step object hold
// its header up to the end of a manifest of mlen bytes: reading that
// many is enough for ParseManifest.
func ManifestPrefix(mlen int) int64 {
	return int64(len(magic) + 2 + binary.PutUvarint(make([]byte, binary.MaxVarintLen64), uint64(mlen)) + mlen)
}

// ParseManifest returns the manifest section of a step object from a
// prefix of it, without reading its blob index or verifying its trailer.
// It returns ErrShort if prefix ends inside the manifest.
func ParseManifest(prefix []byte, name string) ([]byte, error) {
	if len(prefix) < len(magic)+2 {
		return nil, ErrShort
	}
	if string(prefix[:len(magic)]) != magic || prefix[len(magic)] != version {
		return nil, fmt.Errorf("%w: %s: bad magic or version", cas.ErrCorrupt, name)
	}
	if prefix[len(magic)+1] != KindStep {
		return nil, fmt.Errorf("%w: %s: not a step object", cas.ErrCorrupt, name)
	}
	p := prefix[len(magic)+2:]
	mlen, n := binary.Uvarint(p)
	switch {
	case n == 0:
		return nil, ErrShort
	case n < 0 || mlen > MaxManifestSize:
		return nil, fmt.Errorf("%w: %s: bad manifest length", cas.ErrCorrupt, name)
	case uint64(len(p)-n) < mlen:
		return nil, ErrShort
	}
	return p[n : n+int(mlen) : n+int(mlen)], nil
}
