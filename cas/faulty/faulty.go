// Package faulty wraps a cas.Store and injects failures, for tests of the
// layers above: errors before a call reaches the store, delays, and
// dropped responses (the call reaches the store and takes effect, then
// its caller gets an error as if the response had been lost on the way
// back). Injected errors wrap ErrInjected and are marked cas.Transient,
// as a 503 or a reset connection would be.
//
// Faults are drawn from a random source seeded by Faults.Seed, so a
// sequential test sees the same faults on every run.
package faulty

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnlog/cairn/cas"
)

var _ cas.Store = (*Store)(nil)

// ErrInjected is wrapped by every injected error.
var ErrInjected = errors.New("injected fault")

// Op selects store operations.
type Op uint8

// The operations faults can be injected into.
const (
	OpPut Op = 1 << iota
	OpGet
	OpStat
	OpList
	OpDelete

	OpAll = OpPut | OpGet | OpStat | OpList | OpDelete
)

func (o Op) String() string {
	switch o {
	case OpPut:
		return "put"
	case OpGet:
		return "get"
	case OpStat:
		return "stat"
	case OpList:
		return "list"
	case OpDelete:
		return "delete"
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Faults says which faults to inject and how often. Probabilities are
// per call, drawn independently: a call may be delayed and then fail.
type Faults struct {
	Seed uint64
	// Fail is the probability that a call fails before reaching the store.
	Fail float64
	// Drop is the probability that a call reaches the store, takes
	// effect, and then returns an error instead of its result. A dropped
	// List delivers a few entries, then fails.
	Drop float64
	// Delay is the probability that a call first sleeps for a uniform
	// duration in [0, MaxDelay).
	Delay    float64
	MaxDelay time.Duration
	// Ops restricts the faults to some operations; zero means all.
	Ops Op
}

// Counts reports the faults injected so far.
type Counts struct {
	Failed, Dropped, Delayed int64
}

// Store injects faults into calls to the store it wraps.
type Store struct {
	next cas.Store
	f    Faults

	mu  sync.Mutex
	rnd *rand.Rand

	failed, dropped, delayed atomic.Int64
}

// New wraps next.
func New(next cas.Store, f Faults) *Store {
	if f.Ops == 0 {
		f.Ops = OpAll
	}
	return &Store{next: next, f: f, rnd: rand.New(rand.NewPCG(f.Seed, f.Seed^0x5eed5eed5eed5eed))}
}

// Counts returns how many faults were injected so far.
func (s *Store) Counts() Counts {
	return Counts{Failed: s.failed.Load(), Dropped: s.dropped.Load(), Delayed: s.delayed.Load()}
}

// plan is the faults drawn for one call.
type plan struct {
	fail, drop bool
	delay      time.Duration
	dropAfter  int // List: entries delivered before the drop
}

func (s *Store) draw(op Op) plan {
	if s.f.Ops&op == 0 {
		return plan{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var p plan
	if s.f.Delay > 0 && s.rnd.Float64() < s.f.Delay && s.f.MaxDelay > 0 {
		p.delay = time.Duration(s.rnd.Int64N(int64(s.f.MaxDelay)))
	}
	p.fail = s.f.Fail > 0 && s.rnd.Float64() < s.f.Fail
	p.drop = !p.fail && s.f.Drop > 0 && s.rnd.Float64() < s.f.Drop
	p.dropAfter = s.rnd.IntN(4)
	return p
}

// before applies the faults that happen before the call reaches the store.
func (s *Store) before(ctx context.Context, op Op, key string, p plan) error {
	if p.delay > 0 {
		s.delayed.Add(1)
		t := time.NewTimer(p.delay)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	if p.fail {
		s.failed.Add(1)
		return cas.Transient(fmt.Errorf("%s %s: %w", op, key, ErrInjected))
	}
	return nil
}

// after turns a call's outcome into a lost response when the plan says so.
func (s *Store) after(op Op, key string, p plan, err error) error {
	if !p.drop {
		return err
	}
	s.dropped.Add(1)
	return cas.Transient(fmt.Errorf("%s %s: response lost: %w", op, key, ErrInjected))
}

// Put implements cas.Store.
func (s *Store) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	p := s.draw(OpPut)
	if err := s.before(ctx, OpPut, key, p); err != nil {
		return err
	}
	return s.after(OpPut, key, p, s.next.Put(ctx, key, data, opts))
}

// Get implements cas.Store.
func (s *Store) Get(ctx context.Context, key string, off, n int64) ([]byte, error) {
	p := s.draw(OpGet)
	if err := s.before(ctx, OpGet, key, p); err != nil {
		return nil, err
	}
	b, err := s.next.Get(ctx, key, off, n)
	if err := s.after(OpGet, key, p, err); err != nil {
		return nil, err
	}
	return b, nil
}

// Stat implements cas.Store.
func (s *Store) Stat(ctx context.Context, key string) (cas.Info, error) {
	p := s.draw(OpStat)
	if err := s.before(ctx, OpStat, key, p); err != nil {
		return cas.Info{}, err
	}
	info, err := s.next.Stat(ctx, key)
	if err := s.after(OpStat, key, p, err); err != nil {
		return cas.Info{}, err
	}
	return info, nil
}

var errCut = errors.New("listing cut")

// List implements cas.Store. A dropped listing delivers up to a few
// entries and then fails, as a connection cut mid-page would.
func (s *Store) List(ctx context.Context, prefix, startAfter string, fn func(cas.Info) error) error {
	p := s.draw(OpList)
	if err := s.before(ctx, OpList, prefix, p); err != nil {
		return err
	}
	if !p.drop {
		return s.next.List(ctx, prefix, startAfter, fn)
	}
	n := 0
	err := s.next.List(ctx, prefix, startAfter, func(i cas.Info) error {
		if n == p.dropAfter {
			return errCut
		}
		n++
		return fn(i)
	})
	if err != nil && !errors.Is(err, errCut) {
		return err // fn's own error, or the store's
	}
	return s.after(OpList, prefix, p, nil)
}

// Delete implements cas.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	p := s.draw(OpDelete)
	if err := s.before(ctx, OpDelete, key, p); err != nil {
		return err
	}
	return s.after(OpDelete, key, p, s.next.Delete(ctx, key))
}
