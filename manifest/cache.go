package manifest

import (
	"container/list"
	"sync"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
)

// objectCache is an LRU of parsed objects bounded by their total size.
// Objects are immutable, so a cached copy is never stale.
type objectCache struct {
	mu    sync.Mutex
	max   int64
	size  int64
	order *list.List // front = most recent; values are *cacheEntry
	items map[string]*list.Element
	// big holds the keys of objects put that were larger than max, so
	// not kept (at most maxBig of them; see Repo.blob).
	big map[string]bool
}

// maxBig bounds the keys an objectCache remembers as too large to keep.
const maxBig = 4096

type cacheEntry struct {
	key string
	obj *pack.Object
}

func newObjectCache(max int64) *objectCache {
	return &objectCache{max: max, order: list.New(), items: make(map[string]*list.Element)}
}

func (c *objectCache) get(key string) *pack.Object {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*cacheEntry).obj
	}
	return nil
}

func (c *objectCache) put(key string, obj *pack.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[key]; ok {
		return
	}
	if obj.Size() > c.max {
		if c.big == nil || len(c.big) >= maxBig {
			c.big = make(map[string]bool)
		}
		c.big[key] = true
		return
	}
	c.items[key] = c.order.PushFront(&cacheEntry{key: key, obj: obj})
	c.size += obj.Size()
	for c.size > c.max {
		el := c.order.Back()
		e := el.Value.(*cacheEntry)
		c.order.Remove(el)
		delete(c.items, e.key)
		c.size -= e.obj.Size()
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
	if el, ok := c.items[key]; ok {
		c.order.Remove(el)
		delete(c.items, key)
		c.size -= el.Value.(*cacheEntry).obj.Size()
	}
}

// clear drops every object the cache holds.
func (c *objectCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order.Init()
	clear(c.items)
	c.size = 0
}

// blobCache is an LRU of the stored bytes of blobs read alone (by range,
// Repo.rangedBlob), by id, bounded by their total size: a reader diffing
// each step of a session with the one before reads the same few nodes of
// a large pack at every step, a request each. What it holds is decoded
// and verified again at each read (I1).
type blobCache struct {
	mu    sync.Mutex
	max   int64
	size  int64
	order *list.List // front = most recent; values are *blobEntry
	items map[cas.ID]*list.Element
}

type blobEntry struct {
	id     cas.ID
	stored []byte
}

// blobCacheBytes bounds a Repo's blobCache, and maxCachedBlob the size
// of one blob it keeps.
const (
	blobCacheBytes = 1 << 20
	maxCachedBlob  = 64 << 10
)

func newBlobCache(max int64) *blobCache {
	return &blobCache{max: max, order: list.New(), items: make(map[cas.ID]*list.Element)}
}

// clear drops every blob the cache holds.
func (c *blobCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order.Init()
	clear(c.items)
	c.size = 0
}

func (c *blobCache) get(id cas.ID) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[id]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*blobEntry).stored
	}
	return nil
}

func (c *blobCache) put(id cas.ID, stored []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[id]; ok || len(stored) > maxCachedBlob || int64(len(stored)) > c.max {
		return
	}
	c.items[id] = c.order.PushFront(&blobEntry{id: id, stored: stored})
	c.size += int64(len(stored))
	for c.size > c.max {
		el := c.order.Back()
		e := el.Value.(*blobEntry)
		c.order.Remove(el)
		delete(c.items, e.id)
		c.size -= int64(len(e.stored))
	}
}
