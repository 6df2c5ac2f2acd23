package retry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/castest"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/cas/retry"
)

var fast = retry.Policy{Attempts: 5, Base: time.Microsecond, Max: 10 * time.Microsecond}

func TestConformance(t *testing.T) {
	castest.Run(t, func(t *testing.T) cas.Store { return retry.New(mem.New(), fast) })
}

// script wraps a store and lets a test decide, per call, what happens.
type script struct {
	cas.Store
	calls atomic.Int32
	// put runs instead of a plain put; n counts puts from 1.
	put func(n int32, key string, data []byte, opts cas.PutOptions) error
}

func (s *script) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	n := s.calls.Add(1)
	if s.put != nil {
		return s.put(n, key, data, opts)
	}
	return s.Store.Put(ctx, key, data, opts)
}

var errTransient = cas.Transient(errors.New("503 slow down"))

func TestIfAbsentLostResponseIsSuccess(t *testing.T) {
	ctx := context.Background()
	m := mem.New()
	s := &script{Store: m}
	s.put = func(n int32, key string, data []byte, opts cas.PutOptions) error {
		err := m.Put(ctx, key, data, opts)
		if n == 1 {
			return errTransient // applied, but the response was lost
		}
		return err
	}
	if err := retry.New(s, fast).Put(ctx, "slot/1", []byte("mine"), cas.PutOptions{IfAbsent: true}); err != nil {
		t.Fatalf("Put after a lost response = %v, want success", err)
	}
	if got, want := s.calls.Load(), int32(2); got != want {
		t.Fatalf("%d put attempts, want %d", got, want)
	}
}

func TestIfAbsentRealConflictAfterTransient(t *testing.T) {
	ctx := context.Background()
	m := mem.New()
	if err := m.Put(ctx, "slot/1", []byte("theirs"), cas.PutOptions{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	s := &script{Store: m}
	s.put = func(n int32, key string, data []byte, opts cas.PutOptions) error {
		if n == 1 {
			return errTransient // never reached the store
		}
		return m.Put(ctx, key, data, opts)
	}
	err := retry.New(s, fast).Put(ctx, "slot/1", []byte("mine"), cas.PutOptions{IfAbsent: true})
	if !errors.Is(err, cas.ErrExists) {
		t.Fatalf("Put = %v, want ErrExists: the stored bytes are another writer's", err)
	}
}

func TestIfAbsentFirstAttemptConflictIsNotChecked(t *testing.T) {
	// Same bytes, but our first attempt already lost: no earlier attempt
	// of ours can have landed, so this is somebody else's object.
	ctx := context.Background()
	m := mem.New()
	m.Put(ctx, "k", []byte("same"), cas.PutOptions{})
	err := retry.New(m, fast).Put(ctx, "k", []byte("same"), cas.PutOptions{IfAbsent: true})
	if !errors.Is(err, cas.ErrExists) {
		t.Fatalf("Put = %v, want ErrExists", err)
	}
}

func TestIfAbsentConflictButAbsentRetries(t *testing.T) {
	// A 409 ConditionalRequestConflict raced by a delete: the store says
	// "exists" yet nothing is there. The wrapper must create it again.
	ctx := context.Background()
	m := mem.New()
	s := &script{Store: m}
	s.put = func(n int32, key string, data []byte, opts cas.PutOptions) error {
		switch n {
		case 1:
			return errTransient
		case 2:
			return cas.ErrExists
		}
		return m.Put(ctx, key, data, opts)
	}
	if err := retry.New(s, fast).Put(ctx, "k", []byte("x"), cas.PutOptions{IfAbsent: true}); err != nil {
		t.Fatalf("Put = %v, want success on the third attempt", err)
	}
	if got, _ := m.Get(ctx, "k", 0, -1); string(got) != "x" {
		t.Fatalf("stored %q, want x", got)
	}
}

func TestPermanentErrorsNotRetried(t *testing.T) {
	ctx := context.Background()
	for _, perm := range []error{cas.ErrNotFound, cas.ErrExists, cas.ErrInvalidKey, cas.ErrCorrupt,
		fmt.Errorf("get k: %w", cas.Transient(cas.ErrNotFound)), errors.New("403 access denied")} {
		s := &script{Store: mem.New()}
		s.put = func(int32, string, []byte, cas.PutOptions) error { return perm }
		err := retry.New(s, fast).Put(ctx, "k", nil, cas.PutOptions{})
		if err != perm || s.calls.Load() != 1 {
			t.Errorf("%v: %d attempts returning %v, want 1 returning the error itself", perm, s.calls.Load(), err)
		}
	}
}

func TestAttemptsExhausted(t *testing.T) {
	s := &script{Store: mem.New()}
	s.put = func(int32, string, []byte, cas.PutOptions) error { return errTransient }
	err := retry.New(s, fast).Put(context.Background(), "k", nil, cas.PutOptions{})
	if !errors.Is(err, errTransient) || s.calls.Load() != 5 {
		t.Fatalf("%d attempts returning %v, want 5 and the last error", s.calls.Load(), err)
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	s := &script{Store: mem.New()}
	s.put = func(int32, string, []byte, cas.PutOptions) error { return errTransient }
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	err := retry.New(s, retry.Policy{Attempts: 10, Base: time.Hour, Max: time.Hour}).Put(ctx, "k", nil, cas.PutOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Put = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cancel took %v to be noticed", d)
	}
}

// cutList fails the first listing after two entries.
type cutList struct {
	cas.Store
	lists int
}

func (c *cutList) List(ctx context.Context, prefix, after string, fn func(cas.Info) error) error {
	c.lists++
	n := 0
	err := c.Store.List(ctx, prefix, after, func(i cas.Info) error {
		if c.lists == 1 && n == 2 {
			return cas.Transient(io.ErrUnexpectedEOF)
		}
		n++
		return fn(i)
	})
	return err
}

func TestListResumesAfterLastKey(t *testing.T) {
	ctx := context.Background()
	m := mem.New()
	for i := 0; i < 6; i++ {
		m.Put(ctx, fmt.Sprintf("l/%d", i), nil, cas.PutOptions{})
	}
	var got []string
	err := retry.New(&cutList{Store: m}, fast).List(ctx, "l/", "", func(i cas.Info) error {
		got = append(got, i.Key)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[l/0 l/1 l/2 l/3 l/4 l/5]" {
		t.Fatalf("List delivered %v, want each key once in order", got)
	}
}

func TestListCallbackErrorNotRetried(t *testing.T) {
	ctx := context.Background()
	m := mem.New()
	m.Put(ctx, "a", nil, cas.PutOptions{})
	calls := 0
	// A callback error that would look transient if it came from the store.
	err := retry.New(m, fast).List(ctx, "", "", func(cas.Info) error {
		calls++
		return io.ErrUnexpectedEOF
	})
	if !errors.Is(err, io.ErrUnexpectedEOF) || calls != 1 {
		t.Fatalf("List = %v after %d callbacks, want the callback's error after 1", err, calls)
	}
}

func TestIsTransient(t *testing.T) {
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	cases := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("boom"), false},
		{cas.ErrNotFound, false},
		{fmt.Errorf("put: %w", cas.ErrExists), false},
		{context.Canceled, false},
		{cas.Transient(errors.New("500 internal error")), true},
		{fmt.Errorf("get: %w", io.ErrUnexpectedEOF), true},
		{&url.Error{Op: "Put", URL: "http://x", Err: syscall.ECONNRESET}, true},
		{&url.Error{Op: "Put", URL: "http://x", Err: syscall.ECONNREFUSED}, true},
		{&url.Error{Op: "Get", URL: "http://x", Err: io.EOF}, true},
		{&url.Error{Op: "Get", URL: "http://x", Err: timeout}, true},
		{fmt.Errorf("wrapped: %w", syscall.EPIPE), true},
	}
	for _, c := range cases {
		if got := retry.IsTransient(c.err); got != c.want {
			t.Errorf("IsTransient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// failGets fails the first n reads transiently, counting every read.
type failGets struct {
	*script
	n, gets atomic.Int32
}

func (f *failGets) Get(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if f.gets.Add(1) <= f.n.Load() {
		return nil, errTransient
	}
	return f.script.Get(ctx, key, off, n)
}

func TestIfAbsentKnownToExistOnlyReadsAgain(t *testing.T) {
	// The put landed but its response was lost; the next put meets our
	// object, and the read that would tell it ours fails transiently.
	// The object is known to exist by then: later attempts must only
	// read it, not put again, or each attempt needs two requests to get
	// through and a lossy link exhausts the attempts.
	ctx := context.Background()
	m := mem.New()
	s := &script{Store: m}
	s.put = func(n int32, key string, data []byte, opts cas.PutOptions) error {
		err := m.Put(ctx, key, data, opts)
		if n == 1 {
			return errTransient
		}
		return err
	}
	f := &failGets{script: s}
	f.n.Store(3)
	p := fast
	p.Attempts = 6
	if err := retry.New(f, p).Put(ctx, "slot/1", []byte("mine"), cas.PutOptions{IfAbsent: true}); err != nil {
		t.Fatalf("Put = %v, want success", err)
	}
	if got, want := s.calls.Load(), int32(2); got != want {
		t.Errorf("%d put attempts, want %d: once the object is known to exist only reads may follow", got, want)
	}
	if got, want := f.gets.Load(), int32(4); got != want {
		t.Errorf("%d reads, want %d", got, want)
	}
}

// TestNotStoredAfterMaybeLanded: a put whose last attempt left nothing
// (cas.NotStored) after an earlier one that may have landed may have
// landed as a whole: the error the caller gets is not NotStored. One
// refused at its first attempt still is.
func TestNotStoredAfterMaybeLanded(t *testing.T) {
	ctx := context.Background()
	refused := cas.NotStored(&cas.RefusedError{Op: "put", Key: "slot/1", Why: "access denied", Err: errors.New("403 AccessDenied")})
	for _, c := range []struct {
		first error
		want  bool
	}{{errTransient, false}, {refused, true}} {
		s := &script{Store: mem.New()}
		s.put = func(n int32, key string, data []byte, opts cas.PutOptions) error {
			if n == 1 {
				return c.first
			}
			return refused
		}
		err := retry.New(s, fast).Put(ctx, "slot/1", []byte("mine"), cas.PutOptions{IfAbsent: true})
		if err == nil || cas.IsNotStored(err) != c.want {
			t.Errorf("first attempt %v: Put = %v, NotStored %v; want %v", c.first, err, cas.IsNotStored(err), c.want)
		}
		// Either way the refusal stays the cause, for the words above.
		if re := (*cas.RefusedError)(nil); !errors.As(err, &re) {
			t.Errorf("first attempt %v: Put = %v, no cas.RefusedError", c.first, err)
		}
	}
}
