// Package mem is an in-memory cas.Store for unit tests. It keeps the full
// contract (conditional create, ordered listing, copies in and out) so
// tests written against it hold for real backends too.
package mem

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cairnlog/cairn/cas"
)

var _ cas.Store = (*Store)(nil)

type object struct {
	data    []byte
	modTime time.Time
}

// Store is an in-memory cas.Store. The zero value is not usable; call New.
type Store struct {
	mu      sync.RWMutex
	objects map[string]object
}

// New returns an empty in-memory store.
func New() *Store { return &Store{objects: make(map[string]object)} }

// Put implements cas.Store.
func (s *Store) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	if err := cas.ValidateKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return cas.NotStored(err) // nothing was tried
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.objects[key]; ok && opts.IfAbsent {
		return cas.ErrExists
	}
	s.objects[key] = object{data: append([]byte(nil), data...), modTime: time.Now()}
	return nil
}

// Get implements cas.Store.
func (s *Store) Get(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if err := cas.ValidateKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	o, ok := s.objects[key]
	s.mu.RUnlock()
	if !ok {
		return nil, cas.ErrNotFound
	}
	return append([]byte(nil), cas.Slice(o.data, off, n)...), nil
}

// Stat implements cas.Store.
func (s *Store) Stat(ctx context.Context, key string) (cas.Info, error) {
	if err := cas.ValidateKey(key); err != nil {
		return cas.Info{}, err
	}
	s.mu.RLock()
	o, ok := s.objects[key]
	s.mu.RUnlock()
	if !ok {
		return cas.Info{}, cas.ErrNotFound
	}
	return cas.Info{Key: key, Size: int64(len(o.data)), ModTime: o.modTime}, nil
}

// List implements cas.Store.
func (s *Store) List(ctx context.Context, prefix, startAfter string, fn func(cas.Info) error) error {
	if err := cas.ValidatePrefix(prefix); err != nil {
		return err
	}
	s.mu.RLock()
	var infos []cas.Info
	for k, o := range s.objects {
		if strings.HasPrefix(k, prefix) && k > startAfter {
			infos = append(infos, cas.Info{Key: k, Size: int64(len(o.data)), ModTime: o.modTime})
		}
	}
	s.mu.RUnlock()
	sort.Slice(infos, func(i, j int) bool { return infos[i].Key < infos[j].Key })
	for _, i := range infos {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(i); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// Delete implements cas.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := cas.ValidateKey(key); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.objects, key)
	s.mu.Unlock()
	return nil
}
