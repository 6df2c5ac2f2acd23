package httpapi

import (
	"container/list"
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// budget is a weighted semaphore of bytes, first come first served: a
// large request that waits is not overtaken for ever by small ones.
type budget struct {
	mu      sync.Mutex
	size    int64
	free    int64
	waiters list.List // of *bodyWaiter
}

type bodyWaiter struct {
	n     int64
	ready chan struct{} // closed when the bytes are granted
}

func newBudget(size int64) *budget { return &budget{size: size, free: size} }

// acquire takes n bytes of the budget, waiting up to wait for them; it
// answers 503 if they do not come free in time.
func (b *budget) acquire(ctx context.Context, n int64, wait time.Duration) error {
	n = min(n, b.size)
	b.mu.Lock()
	if b.waiters.Len() == 0 && b.free >= n {
		b.free -= n
		b.mu.Unlock()
		return nil
	}
	w := &bodyWaiter{n: n, ready: make(chan struct{})}
	elem := b.waiters.PushBack(w)
	b.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	var err error
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-t.C:
		err = &apiError{status: http.StatusServiceUnavailable, code: "busy",
			msg: fmt.Sprintf("the server is at its limit of %d bytes of request bodies at once; retry shortly", b.size)}
	}
	b.mu.Lock()
	select {
	case <-w.ready:
		// Granted while giving up: hand the bytes back.
		b.free += n
	default:
		b.waiters.Remove(elem)
	}
	b.grant()
	b.mu.Unlock()
	return err
}

// release returns n bytes taken by acquire.
func (b *budget) release(n int64) {
	n = min(n, b.size)
	b.mu.Lock()
	b.free += n
	b.grant()
	b.mu.Unlock()
}

// grant wakes the waiters at the front whose bytes are free, in order.
func (b *budget) grant() {
	for e := b.waiters.Front(); e != nil; e = b.waiters.Front() {
		w := e.Value.(*bodyWaiter)
		if w.n > b.free {
			return
		}
		b.free -= w.n
		b.waiters.Remove(e)
		close(w.ready)
	}
}
