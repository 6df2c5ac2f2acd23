package lru

import (
	"slices"
	"testing"
)

// TestEvictsLeastRecentlyUsed: past its budget the cache drops the
// entries used longest ago, a Get counting as a use and a Has not.
func TestEvictsLeastRecentlyUsed(t *testing.T) {
	c := New[string, int](30)
	c.Put("a", 1, 10)
	c.Put("b", 2, 10)
	c.Put("c", 3, 10)
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Fatalf("Get(a) = %d, %v; want 1, true", v, ok)
	}
	if !c.Has("b") {
		t.Fatal("Has(b) = false")
	}
	c.Put("d", 4, 10) // drops b: a was used since, Has does not count
	if got, want := c.Keys(), []string{"d", "a", "c"}; !slices.Equal(got, want) {
		t.Fatalf("keys = %v, want %v", got, want)
	}
	c.Put("e", 5, 20) // drops c, then a
	if got, want := c.Keys(), []string{"e", "d"}; !slices.Equal(got, want) {
		t.Fatalf("keys = %v, want %v", got, want)
	}
	if got, want := c.Cost(), int64(30); got != want {
		t.Errorf("cost = %d, want %d", got, want)
	}
}

// TestPutReplaces: a Put of a kept key replaces its value and cost and
// makes it the most recently used.
func TestPutReplaces(t *testing.T) {
	c := New[string, int](100)
	c.Put("a", 1, 10)
	c.Put("b", 2, 10)
	c.Put("a", 3, 50)
	if v, _ := c.Get("a"); v != 3 {
		t.Errorf("Get(a) = %d, want 3", v)
	}
	if got, want := c.Keys(), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("keys = %v, want %v", got, want)
	}
	if got, want := c.Cost(), int64(60); got != want {
		t.Errorf("cost = %d, want %d", got, want)
	}
}

// TestTooLargeNotKept: a value costing more than the whole budget is not
// kept, drops no other entry, and drops the value its key had.
func TestTooLargeNotKept(t *testing.T) {
	c := New[string, int](10)
	c.Put("a", 1, 5)
	c.Put("b", 2, 5)
	if c.Put("b", 3, 11) {
		t.Error("Put of a value costing more than the budget reported it kept")
	}
	if c.Has("b") || !c.Has("a") || c.Cost() != 5 || c.Len() != 1 {
		t.Errorf("after a too large Put: keys %v, cost %d; want [a], 5", c.Keys(), c.Cost())
	}
	if !c.Put("c", 4, 5) || !c.Put("d", 5, 0) {
		t.Error("Put of a value that fits reported it not kept")
	}
}

// TestRemoveClearSetMax: Remove drops one entry, Clear all of them, and
// SetMax drops the least recently used until the new budget holds.
func TestRemoveClearSetMax(t *testing.T) {
	c := New[int, string](100)
	for i := range 5 {
		c.Put(i, "v", 10)
	}
	c.Remove(2)
	c.Remove(7) // not kept: nothing happens
	if got, want := c.Keys(), []int{4, 3, 1, 0}; !slices.Equal(got, want) {
		t.Fatalf("keys = %v, want %v", got, want)
	}
	c.SetMax(25)
	if got, want := c.Keys(), []int{4, 3}; !slices.Equal(got, want) || c.Cost() != 20 || c.Max() != 25 {
		t.Fatalf("after SetMax(25): keys %v, cost %d, max %d", got, c.Cost(), c.Max())
	}
	c.Clear()
	if c.Len() != 0 || c.Cost() != 0 || len(c.Keys()) != 0 {
		t.Fatalf("after Clear: %d entries costing %d", c.Len(), c.Cost())
	}
	c.Put(9, "w", 10)
	if v, ok := c.Get(9); !ok || v != "w" {
		t.Errorf("Get after Clear and Put = %q, %v", v, ok)
	}
}

// model is the cache as plainly as it can be said: the entries in order
// of use, the most recent first.
type model struct {
	max     int64
	entries []modelEntry
}

type modelEntry struct {
	key, val byte
	cost     int64
}

func (m *model) cost() (n int64) {
	for _, e := range m.entries {
		n += e.cost
	}
	return n
}

func (m *model) find(key byte) int {
	return slices.IndexFunc(m.entries, func(e modelEntry) bool { return e.key == key })
}

func (m *model) remove(key byte) {
	if i := m.find(key); i >= 0 {
		m.entries = slices.Delete(m.entries, i, i+1)
	}
}

func (m *model) shrink() {
	for m.cost() > m.max {
		m.entries = m.entries[:len(m.entries)-1]
	}
}

func (m *model) get(key byte) (byte, bool) {
	i := m.find(key)
	if i < 0 {
		return 0, false
	}
	e := m.entries[i]
	m.entries = slices.Insert(slices.Delete(m.entries, i, i+1), 0, e)
	return e.val, true
}

func (m *model) put(key, val byte, cost int64) bool {
	m.remove(key)
	if cost > m.max {
		return false
	}
	m.entries = slices.Insert(m.entries, 0, modelEntry{key, val, cost})
	m.shrink()
	return true
}

// FuzzCacheMatchesModel runs a sequence of operations, read from the
// fuzzer's bytes, on a cache and on the model, and compares them after
// each: the values got, the keys kept in order of use, the cost.
func FuzzCacheMatchesModel(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 0, 2, 4, 5, 1, 1, 0, 3, 9, 0, 2, 7, 1, 0, 3, 1, 5, 30, 4, 20})
	f.Add([]byte{0, 1, 1, 40, 0, 2, 2, 40, 0, 3, 3, 40, 1, 1, 0, 4, 4, 40, 2, 2, 3, 0, 5, 10})
	f.Fuzz(func(t *testing.T, ops []byte) {
		const max = 100
		c := New[byte, byte](max)
		m := &model{max: max}
		for len(ops) >= 2 {
			op, key := ops[0]%6, ops[1]%8
			ops = ops[2:]
			switch op {
			case 0: // put: a value and a cost follow
				if len(ops) < 2 {
					return
				}
				val, cost := ops[0], int64(ops[1])
				ops = ops[2:]
				if got, want := c.Put(key, val, cost), m.put(key, val, cost); got != want {
					t.Fatalf("Put(%d, %d, %d) = %v, model %v", key, val, cost, got, want)
				}
			case 1:
				gv, gok := c.Get(key)
				mv, mok := m.get(key)
				if gv != mv || gok != mok {
					t.Fatalf("Get(%d) = %d, %v; model %d, %v", key, gv, gok, mv, mok)
				}
			case 2:
				if got, want := c.Has(key), m.find(key) >= 0; got != want {
					t.Fatalf("Has(%d) = %v, model %v", key, got, want)
				}
			case 3:
				c.Remove(key)
				m.remove(key)
			case 4:
				if key == 0 {
					c.Clear()
					m.entries = nil
				}
			case 5: // a new budget, from the key
				n := int64(key) * 20
				c.SetMax(n)
				m.max = n
				m.shrink()
			}
			var keys []byte
			for _, e := range m.entries {
				keys = append(keys, e.key)
			}
			if got := c.Keys(); !slices.Equal(got, keys) {
				t.Fatalf("keys = %v, model %v", got, keys)
			}
			if got, want := c.Cost(), m.cost(); got != want || got > c.Max() || c.Len() != len(keys) {
				t.Fatalf("cost = %d (%d entries), model %d (%d); budget %d", got, c.Len(), want, len(keys), c.Max())
			}
		}
	})
}
