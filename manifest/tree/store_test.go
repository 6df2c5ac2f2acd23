package tree_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/manifest/tree"
)

// memStore is a tree.Sink and tree.Source in memory. It checks ids on the
// way in and records the order of first puts, for golden files and for
// counting what a build adds.
type memStore struct {
	mu    sync.Mutex
	blobs map[cas.ID][]byte
	order []cas.ID
}

var (
	_ tree.Sink   = (*memStore)(nil)
	_ tree.Source = (*memStore)(nil)
)

func newMemStore() *memStore { return &memStore{blobs: make(map[cas.ID][]byte)} }

func (s *memStore) Put(id cas.ID, raw []byte) error {
	if cas.Sum(raw) != id {
		return fmt.Errorf("put %s: content does not hash to its id", id.Short())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.blobs[id]; !ok {
		s.blobs[id] = append([]byte(nil), raw...)
		s.order = append(s.order, id)
	}
	return nil
}

func (s *memStore) Blob(ctx context.Context, id cas.ID) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.blobs[id]
	if !ok {
		return nil, fmt.Errorf("blob %s: %w", id.Short(), cas.ErrNotFound)
	}
	return b, nil
}

func (s *memStore) has(id cas.ID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.blobs[id]
	return ok
}

// putNode stores a hand-made node and returns its ref.
func (s *memStore) putNode(n *tree.NodeData, size int64) tree.Ref {
	b := n.Encode()
	id := cas.Sum(b)
	if err := s.Put(id, b); err != nil {
		panic(err)
	}
	return tree.Ref{Kind: tree.Node, ID: id, Size: size}
}

// putBlob stores raw bytes and returns a blob ref.
func (s *memStore) putBlob(raw []byte) tree.Ref {
	id := cas.Sum(raw)
	if err := s.Put(id, raw); err != nil {
		panic(err)
	}
	return tree.Ref{Kind: tree.Blob, ID: id, Size: int64(len(raw))}
}

// recordingSink forwards to a store and records every put not already in
// base, to measure what a build adds.
type recordingSink struct {
	base  *memStore
	store *memStore
	added map[cas.ID]int
}

func (r *recordingSink) Put(id cas.ID, raw []byte) error {
	if !r.base.has(id) {
		r.added[id] = len(raw)
	}
	return r.store.Put(id, raw)
}

// seeded returns n pseudo-random bytes from a PCG seeded with seed. Its
// output is pinned by golden files: do not change it.
func seeded(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x636169726e))
	b := make([]byte, (n+7)&^7)
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	return b[:n]
}

// seededText returns n bytes of lower-case words from seed.
func seededText(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, seed^0x74657874))
	b := make([]byte, n)
	for i := range b {
		if r.IntN(6) == 0 {
			b[i] = ' '
		} else {
			b[i] = byte('a' + r.IntN(26))
		}
	}
	return string(b)
}
