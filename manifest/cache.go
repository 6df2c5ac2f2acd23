package manifest

import (
	"container/list"
	"sync"

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
