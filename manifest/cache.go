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
}

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
	if _, ok := c.items[key]; ok || obj.Size() > c.max {
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

func (c *objectCache) remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
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
