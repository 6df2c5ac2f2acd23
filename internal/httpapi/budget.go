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
//
// A body is taken from it as it arrives, so the budget bounds the bodies
// in memory whether they are arriving or being acted on. Bodies half
// arrived could then hold the whole budget, each waiting for more: the
// first of them waiting may take beyond the budget (free goes below
// zero), one body at a time, so that one always finishes and frees its
// bytes. Memory is bounded by the budget and one body more.
//
// A body that holds bytes while others wait for them must then keep a
// pace (bodyGate.squeeze): else a few clients that sent most of a body and
// then a byte now and then, never quite stalling, held the budget until
// their BodyTimeout, and starting again kept every other body waiting
// for ever.
type budget struct {
	mu      sync.Mutex
	size    int64
	free    int64
	waiters list.List // of *bodyWaiter
	over    *bodyGate // the body taking beyond the budget, if any
	// arriving holds the bodies that hold bytes and have not arrived in
	// full, true once squeezed.
	arriving map[*bodyGate]bool
}

type bodyWaiter struct {
	n     int64
	gate  *bodyGate     // the body it is for, if it holds bytes already
	ready chan struct{} // closed when the bytes are granted
}

func newBudget(size int64) *budget {
	return &budget{size: size, free: size, arriving: make(map[*bodyGate]bool)}
}

// acquire takes n bytes of the budget, waiting up to wait for them; it
// answers 503 if they do not come free in time. g, if not nil, is a
// body that already holds bytes of the budget, which may take beyond it
// (see budget).
func (b *budget) acquire(ctx context.Context, n int64, wait time.Duration, g *bodyGate) error {
	n = min(n, b.size)
	b.mu.Lock()
	if b.waiters.Len() == 0 && b.free >= n {
		b.free -= n
		b.mu.Unlock()
		return nil
	}
	w := &bodyWaiter{n: n, gate: g, ready: make(chan struct{})}
	elem := b.waiters.PushBack(w)
	b.grant()
	var squeeze []*bodyGate
	select {
	case <-w.ready:
	default:
		// It waits: every other body holding bytes and still arriving
		// must now keep a pace (bodyGate.squeeze).
		for a, squeezed := range b.arriving {
			if !squeezed && a != g {
				b.arriving[a] = true
				squeeze = append(squeeze, a)
			}
		}
	}
	b.mu.Unlock()
	for _, a := range squeeze {
		a.squeeze()
	}
	if g != nil {
		// Held up by the budget, not by its client: the time waited
		// does not count against a pace asked of it.
		defer g.waited(time.Now())
	}
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

// arrive notes that g holds bytes and is still arriving; left notes
// that it has arrived in full, or given up.
func (b *budget) arrive(g *bodyGate) {
	b.mu.Lock()
	b.arriving[g] = false
	b.mu.Unlock()
}

func (b *budget) left(g *bodyGate) {
	b.mu.Lock()
	delete(b.arriving, g)
	b.mu.Unlock()
}

// release returns n bytes taken by acquire; g, if not nil, is the body
// that took them, which no longer takes beyond the budget.
func (b *budget) release(n int64, g *bodyGate) {
	b.mu.Lock()
	b.free += n
	if g != nil && b.over == g {
		b.over = nil
	}
	b.grant()
	b.mu.Unlock()
}

// grant wakes the waiters at the front whose bytes are free, in order.
// If the front's do not fit, the first waiting body that holds bytes
// already may take beyond the budget, when no other body does.
func (b *budget) grant() {
	for e := b.waiters.Front(); e != nil; e = b.waiters.Front() {
		w := e.Value.(*bodyWaiter)
		if w.n > b.free {
			break
		}
		b.free -= w.n
		b.waiters.Remove(e)
		close(w.ready)
	}
	for e := b.waiters.Front(); e != nil; e = e.Next() {
		w := e.Value.(*bodyWaiter)
		if w.gate == nil || b.over != nil && b.over != w.gate {
			continue
		}
		b.over = w.gate
		b.free -= w.n
		b.waiters.Remove(e)
		close(w.ready)
		return
	}
}
