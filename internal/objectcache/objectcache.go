// Package objectcache keeps local copies of the objects that commits on
// this machine wrote to a store (step objects and packs), so that the
// commit in a later process that merges them into a pack reads them here
// instead of from the store. It is the head cache's sibling: the head
// cache saves a commit the reads of finding its parent, this one the
// reads of compaction.
//
// A copy is a hint, never an authority. A file that cannot be read, is
// too large, truncated, has the wrong version, checksum or key is
// ignored; and what keeps even a well-formed copy of the wrong bytes out
// of a pack is the manifest package, which uses a copy only if it holds
// exactly the blobs the writer's index places in that object, each
// decoding to its id (manifest.LocalObjects).
package objectcache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/internal/cachedir"
	"github.com/cairnlog/cairn/manifest"
)

// Format and bounds of the cache.
const (
	magic   = "CROC"
	version = 1
	suffix  = ".obj"
	// MaxObject bounds the objects kept: a larger one is not cached (it
	// is one large read, and compaction leaves such objects where they
	// are; see manifest.KeepObjectBytes).
	MaxObject = 1 << 20
	// MaxDirBytes bounds the files of the directory together: the least
	// recently written go first when a prune finds them past it.
	MaxDirBytes = 128 << 20
	// pruneEvery: one new file in pruneEvery (by its name's hash) prunes
	// the directory, so that a commit does not list the whole directory
	// every time; between prunes it may pass MaxDirBytes by at most about
	// pruneEvery objects.
	pruneEvery = 32
	maxKey     = 1 << 13
	// maxFile bounds a file: the object, its key and the framing.
	maxFile = MaxObject + maxKey + 64
)

// Cache is the directory of object copies of one store.
type Cache struct {
	dir   string
	store string
}

var _ manifest.LocalObjects = (*Cache)(nil)

// New returns the cache of the store named store (its URL, made
// absolute for a local path) in directory dir.
func New(dir, store string) *Cache { return &Cache{dir: dir, store: store} }

// key is what a file is named for and records: the store and the
// object's key, so that another store's object at the same key is never
// taken for this one.
func (c *Cache) key(object string) string {
	return "cairn object\x00" + c.store + "\x00" + object
}

func (c *Cache) path(key string) string {
	return filepath.Join(c.dir, cachedir.Name(key, suffix))
}

// Object returns the copy of the object at key, or nil if there is no
// usable one.
func (c *Cache) Object(key string) []byte {
	k := c.key(key)
	raw, err := cachedir.Read(c.path(k), maxFile)
	if err != nil {
		return nil
	}
	got, data, ok := decode(raw)
	if !ok || got != k {
		return nil
	}
	return data
}

// Keep writes a copy of data, the object at key, straight to its file
// (no temporary file renamed over it: a commit creates one file, not
// two; issue 14, target 7). A copy read while it is written, or left
// torn by a crash or by two processes keeping the same object at once,
// fails its checksum and is ignored, and Object's caller checks every
// blob besides. Best effort: a copy that cannot be written costs a later
// compaction one GET.
func (c *Cache) Keep(key string, data []byte) {
	k := c.key(key)
	if len(data) > MaxObject || len(k) > maxKey {
		return
	}
	path := c.path(k)
	file := encode(k, data)
	err := os.WriteFile(path, file, 0o600)
	if errors.Is(err, os.ErrNotExist) {
		// The first copy of this cache: make its directory.
		if err = os.MkdirAll(c.dir, 0o700); err == nil {
			err = os.WriteFile(path, file, 0o600)
		}
	}
	if err != nil {
		// Perhaps half written: remove it rather than leave it to be read.
		_ = cachedir.Remove(path)
		return
	}
	if sum := cas.Sum([]byte(k)); sum[0]%pruneEvery == 0 {
		cachedir.Dir{Path: c.dir, Suffix: suffix, MaxBytes: MaxDirBytes}.Prune()
	}
}

// Drop removes the copy of the object at key, if any.
func (c *Cache) Drop(key string) {
	_ = cachedir.Remove(c.path(c.key(key)))
}

// encode returns the file form of an object: magic, version, key,
// object, then the BLAKE3 hash of all that.
func encode(key string, data []byte) []byte {
	out := make([]byte, 0, len(magic)+1+2*binary.MaxVarintLen64+len(key)+len(data)+cas.IDSize)
	out = append(out, magic...)
	out = append(out, version)
	out = binary.AppendUvarint(out, uint64(len(key)))
	out = append(out, key...)
	out = binary.AppendUvarint(out, uint64(len(data)))
	out = append(out, data...)
	sum := cas.Sum(out)
	return append(out, sum[:]...)
}

// decode parses a file, checking everything encode guarantees.
func decode(raw []byte) (key string, data []byte, ok bool) {
	if len(raw) < len(magic)+1+cas.IDSize || string(raw[:len(magic)]) != magic || raw[len(magic)] != version {
		return "", nil, false
	}
	body := raw[:len(raw)-cas.IDSize]
	if sum := cas.Sum(body); !bytes.Equal(sum[:], raw[len(body):]) {
		return "", nil, false
	}
	p := body[len(magic)+1:]
	k, n := binary.Uvarint(p)
	if n <= 0 || k > maxKey || k > uint64(len(p)-n) {
		return "", nil, false
	}
	key, p = string(p[n:n+int(k)]), p[n+int(k):]
	d, n := binary.Uvarint(p)
	if n <= 0 || d > MaxObject || d != uint64(len(p)-n) {
		return "", nil, false
	}
	return key, p[n:], true
}
