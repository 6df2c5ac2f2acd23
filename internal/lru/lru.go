// Package lru is a cache of values bounded by their total cost (their
// size in bytes, usually) that drops the least recently used first. It
// is the one such cache of the read path: the object cache, the cache
// of blobs read alone and the blob tables of the read view are each one
// (package manifest).
//
// A Cache is not safe for concurrent use: its owner holds its own lock
// around it, often together with other state of its own.
package lru

// Cache maps keys to values, each with a cost, keeping the total cost at
// most its budget by dropping the least recently used entries. The zero
// Cache is not usable: see New.
type Cache[K comparable, V any] struct {
	max   int64
	total int64
	items map[K]*entry[K, V]
	// root is the sentinel of the ring of entries: root.next the most
	// recently used, root.prev the least.
	root entry[K, V]
}

type entry[K comparable, V any] struct {
	key        K
	val        V
	cost       int64
	prev, next *entry[K, V]
}

// New returns an empty cache whose entries cost at most max together.
func New[K comparable, V any](max int64) *Cache[K, V] {
	c := &Cache[K, V]{max: max, items: make(map[K]*entry[K, V])}
	c.root.next, c.root.prev = &c.root, &c.root
	return c
}

// Get returns the value of key, if kept, and makes it the most recently used.
func (c *Cache[K, V]) Get(key K) (V, bool) {
	e, ok := c.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.unlink(e)
	c.pushFront(e)
	return e.val, true
}

// Has reports whether key is kept, leaving the order of use as it is.
func (c *Cache[K, V]) Has(key K) bool {
	_, ok := c.items[key]
	return ok
}

// Put keeps val at key, costing cost (at least 0), in place of any value
// key had, as the most recently used; then drops the least recently used
// entries until the total cost is within the budget. A value costing
// more than the whole budget is not kept (nor is the value key had), and
// Put reports false.
func (c *Cache[K, V]) Put(key K, val V, cost int64) bool {
	c.Remove(key)
	if cost < 0 {
		cost = 0
	}
	if cost > c.max {
		return false
	}
	e := &entry[K, V]{key: key, val: val, cost: cost}
	c.items[key] = e
	c.pushFront(e)
	c.total += cost
	c.shrink()
	return true
}

// Remove drops key, if kept.
func (c *Cache[K, V]) Remove(key K) {
	if e, ok := c.items[key]; ok {
		c.drop(e)
	}
}

// Clear drops every entry.
func (c *Cache[K, V]) Clear() {
	clear(c.items)
	c.root.next, c.root.prev = &c.root, &c.root
	c.total = 0
}

// SetMax changes the budget to max, dropping the least recently used
// entries until the total cost is within it.
func (c *Cache[K, V]) SetMax(max int64) {
	c.max = max
	c.shrink()
}

// Max returns the budget: the most the entries may cost together.
func (c *Cache[K, V]) Max() int64 { return c.max }

// Cost returns the total cost of the entries kept.
func (c *Cache[K, V]) Cost() int64 { return c.total }

// Len returns the number of entries kept.
func (c *Cache[K, V]) Len() int { return len(c.items) }

// Keys returns the keys kept, the most recently used first.
func (c *Cache[K, V]) Keys() []K {
	keys := make([]K, 0, len(c.items))
	for e := c.root.next; e != &c.root; e = e.next {
		keys = append(keys, e.key)
	}
	return keys
}

// shrink drops the least recently used entries until the total cost is
// within the budget.
func (c *Cache[K, V]) shrink() {
	for c.total > c.max && c.root.prev != &c.root {
		c.drop(c.root.prev)
	}
}

func (c *Cache[K, V]) drop(e *entry[K, V]) {
	c.unlink(e)
	delete(c.items, e.key)
	c.total -= e.cost
}

func (c *Cache[K, V]) unlink(e *entry[K, V]) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

func (c *Cache[K, V]) pushFront(e *entry[K, V]) {
	e.prev, e.next = &c.root, c.root.next
	c.root.next.prev = e
	c.root.next = e
}
