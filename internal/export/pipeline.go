package export

import (
	"context"
	"sync"
)

// ordered runs work on each item that each yields, up to workers at a
// time, and hands the results to emit in the order the items came. At
// most 2*workers items are in flight, and, if maxBytes > 0, the bytes
// work reserves with reserve (for what its result holds) stay within
// maxBytes: a worker waits in reserve until earlier results are emitted,
// except the worker of the next item to emit, which never waits (so one
// item larger than maxBytes still goes through). Memory stays bounded
// however many items there are and however large. The first error from
// each, work or emit stops everything and is returned.
func ordered[I, T any](ctx context.Context, workers int, maxBytes int64,
	each func(ctx context.Context, yield func(I) error) error,
	work func(ctx context.Context, item I) (T, error),
	emit func(T) error,
) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b := newBudget(ctx, maxBytes)
	type result struct {
		v   T
		err error
	}
	type job struct {
		item I
		tk   *ticket
		slot chan result
	}
	jobs := make(chan job)
	order := make(chan chan result, 2*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				v, err := work(context.WithValue(ctx, ticketKey{}, j.tk), j.item)
				j.slot <- result{v, err}
			}
		}()
	}
	prodErr := make(chan error, 1)
	go func() {
		defer close(order)
		defer close(jobs)
		var seq uint64
		prodErr <- each(ctx, func(item I) error {
			slot := make(chan result, 1)
			tk := &ticket{b: b, seq: seq}
			seq++
			select {
			case order <- slot:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case jobs <- job{item, tk, slot}:
			case <-ctx.Done():
				slot <- result{err: ctx.Err()}
				return ctx.Err()
			}
			return nil
		})
	}()
	var firstErr error
	for slot := range order {
		r := <-slot
		if firstErr != nil {
			continue // drain
		}
		if r.err == nil {
			r.err = emit(r.v)
		}
		b.emitted()
		if r.err != nil {
			firstErr = r.err
			cancel()
		}
	}
	wg.Wait()
	if err := <-prodErr; firstErr == nil && err != nil {
		firstErr = err
	}
	return firstErr
}

// budget bounds the bytes that results waiting to be emitted hold.
type budget struct {
	mu   sync.Mutex
	cond *sync.Cond
	max  int64
	used int64
	next uint64 // the sequence number of the next item to emit
	held map[uint64]int64
	done bool
}

func newBudget(ctx context.Context, max int64) *budget {
	b := &budget{max: max, held: map[uint64]int64{}}
	b.cond = sync.NewCond(&b.mu)
	context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.done = true
		b.mu.Unlock()
		b.cond.Broadcast()
	})
	return b
}

// emitted releases what the next item held and moves on to the one after.
func (b *budget) emitted() {
	b.mu.Lock()
	b.used -= b.held[b.next]
	delete(b.held, b.next)
	b.next++
	b.mu.Unlock()
	b.cond.Broadcast()
}

// ticket is one item's account with a budget.
type ticket struct {
	b   *budget
	seq uint64
}

type ticketKey struct{}

// reserve accounts n more bytes (n = 0: waits for room before reading) to the item ctx's work is for, waiting
// while that would pass the budget and the item is not the next to emit.
// Outside ordered, or without a budget, it does nothing.
func reserve(ctx context.Context, n int64) error {
	tk, _ := ctx.Value(ticketKey{}).(*ticket)
	if tk == nil || tk.b.max <= 0 {
		return nil
	}
	b := tk.b
	b.mu.Lock()
	defer b.mu.Unlock()
	// n == 0 asks only for room: it waits while the budget is spent.
	for (b.used+n > b.max || b.used >= b.max) && tk.seq != b.next && !b.done {
		b.cond.Wait()
	}
	if b.done {
		return ctx.Err()
	}
	b.used += n
	b.held[tk.seq] += n
	return nil
}
