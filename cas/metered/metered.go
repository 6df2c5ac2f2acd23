// Package metered wraps a cas.Store and counts the requests made through
// it, by kind, and the bytes written. Stack it directly above a backend
// (below any retry wrapper) so that every attempt is one counted request.
package metered

import (
	"context"
	"sync/atomic"

	"github.com/cairnlog/cairn/cas"
)

var _ cas.Store = (*Store)(nil)

// Counts is a snapshot of the requests made through a Store.
type Counts struct {
	Put          int64 `json:"put"`
	Get          int64 `json:"get"`
	List         int64 `json:"list"`
	Head         int64 `json:"head"`
	Delete       int64 `json:"delete"`
	BytesWritten int64 `json:"-"`
	BytesRead    int64 `json:"-"`
}

// Sub returns c - o, the requests made between two snapshots.
func (c Counts) Sub(o Counts) Counts {
	return Counts{
		Put: c.Put - o.Put, Get: c.Get - o.Get, List: c.List - o.List,
		Head: c.Head - o.Head, Delete: c.Delete - o.Delete,
		BytesWritten: c.BytesWritten - o.BytesWritten, BytesRead: c.BytesRead - o.BytesRead,
	}
}

// Store counts requests to the store it wraps.
type Store struct {
	next                              cas.Store
	put, get, list, head, del, bw, br atomic.Int64
}

// New wraps next.
func New(next cas.Store) *Store { return &Store{next: next} }

// Counts returns the counts so far.
func (s *Store) Counts() Counts {
	return Counts{
		Put: s.put.Load(), Get: s.get.Load(), List: s.list.Load(), Head: s.head.Load(),
		Delete: s.del.Load(), BytesWritten: s.bw.Load(), BytesRead: s.br.Load(),
	}
}

// Put implements cas.Store.
func (s *Store) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	s.put.Add(1)
	s.bw.Add(int64(len(data)))
	return s.next.Put(ctx, key, data, opts)
}

// Get implements cas.Store.
func (s *Store) Get(ctx context.Context, key string, off, n int64) ([]byte, error) {
	s.get.Add(1)
	b, err := s.next.Get(ctx, key, off, n)
	s.br.Add(int64(len(b)))
	return b, err
}

// Stat implements cas.Store (an S3 HEAD request).
func (s *Store) Stat(ctx context.Context, key string) (cas.Info, error) {
	s.head.Add(1)
	return s.next.Stat(ctx, key)
}

// List implements cas.Store. It counts one request per 1,000 keys
// returned (at least one), as S3 pages its listings.
func (s *Store) List(ctx context.Context, prefix, startAfter string, fn func(cas.Info) error) error {
	n := 0
	s.list.Add(1)
	return s.next.List(ctx, prefix, startAfter, func(i cas.Info) error {
		n++
		if n%1000 == 1 && n > 1 {
			s.list.Add(1)
		}
		return fn(i)
	})
}

// Delete implements cas.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	s.del.Add(1)
	return s.next.Delete(ctx, key)
}
