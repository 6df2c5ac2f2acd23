package manifest

import (
	"sync"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/internal/lru"
)

// objectCache is an LRU of parsed objects bounded by their total size.
// Objects are immutable, so a cached copy is never stale.
type objectCache struct {
	mu   sync.Mutex
	objs *lru.Cache[string, *pack.Object]
	// big holds the keys of objects put that were larger than the
	// cache, so not kept (at most maxBig of them; see Repo.blob).
	big map[string]bool
}

// maxBig bounds the keys an objectCache remembers as too large to keep.
const maxBig = 4096

func newObjectCache(max int64) *objectCache {
	return &objectCache{objs: lru.New[string, *pack.Object](max)}
}

func (c *objectCache) get(key string) *pack.Object {
	c.mu.Lock()
	defer c.mu.Unlock()
	obj, _ := c.objs.Get(key)
	return obj
}

func (c *objectCache) put(key string, obj *pack.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.objs.Has(key) {
		return
	}
	if !c.objs.Put(key, obj, obj.Size()) {
		if c.big == nil || len(c.big) >= maxBig {
			c.big = make(map[string]bool)
		}
		c.big[key] = true
	}
}

// tooBig reports whether the object at key was put, and found larger
// than the cache keeps.
func (c *objectCache) tooBig(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.big[key]
}

func (c *objectCache) remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.big, key)
	c.objs.Remove(key)
}

// reset empties the cache and bounds it to max bytes from now on. It
// may be called beside the cache's other methods.
func (c *objectCache) reset(max int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.objs = lru.New[string, *pack.Object](max)
	c.big = nil
}

// clear drops every object the cache holds.
func (c *objectCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.objs.Clear()
}

// blobCache is an LRU of the stored bytes of blobs read alone (by range,
// Repo.rangedBlob), by id, bounded by their total size: a reader diffing
// each step of a session with the one before reads the same few nodes of
// a large pack at every step, a request each. What it holds is decoded
// and verified again at each read (I1).
type blobCache struct {
	mu    sync.Mutex
	blobs *lru.Cache[cas.ID, []byte]
}

// blobCacheBytes bounds a Repo's blobCache, and maxCachedBlob the size
// of one blob it keeps.
const (
	blobCacheBytes = 1 << 20
	maxCachedBlob  = 64 << 10
)

func newBlobCache(max int64) *blobCache {
	return &blobCache{blobs: lru.New[cas.ID, []byte](max)}
}

// clear drops every blob the cache holds.
func (c *blobCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.blobs.Clear()
}

func (c *blobCache) get(id cas.ID) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	stored, _ := c.blobs.Get(id)
	return stored
}

func (c *blobCache) put(id cas.ID, stored []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.blobs.Has(id) || len(stored) > maxCachedBlob {
		return
	}
	c.blobs.Put(id, stored, int64(len(stored)))
}
