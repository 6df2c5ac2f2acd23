// Package retry wraps a cas.Store and retries transient failures with
// capped exponential backoff and full jitter. It is the one place in the
// stack where requests are retried: the S3 backends turn their clients'
// own retries off so that every attempt is visible (and counted) here.
//
// Stack it above metered, so each attempt is one counted request:
//
//	retry.New(metered.New(backend), retry.DefaultPolicy)
//
// Errors that can never succeed on a second try are returned at once:
// cas.ErrNotFound, cas.ErrExists, cas.ErrInvalidKey, cas.ErrCorrupt, and
// the caller's own context being done.
//
// Conditional creates need care. When an attempt fails transiently its
// put may still have been applied by the server (the response was lost),
// so a later attempt can meet our own object and get cas.ErrExists. After
// such a failure the wrapper reads the object back: if it holds exactly
// the bytes we tried to put, the create is reported as a success, not as
// a false conflict. A writer whose bytes were not stored still gets
// cas.ErrExists, so two writers of different bytes can never both win.
// Two writers of byte-identical data cannot be told apart this way; for
// content-addressed objects that is harmless, and callers that fence on a
// slot (step manifests) put the writer's identity in the bytes.
package retry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"time"

	"github.com/cairnlog/cairn/cas"
)

var _ cas.Store = (*Store)(nil)

// Policy bounds the retries of one call.
type Policy struct {
	// Attempts is the most attempts per call, the first included.
	Attempts int
	// Base is the backoff cap before the second attempt; it doubles with
	// each attempt. The actual wait is drawn uniformly from [0, cap]
	// ("full jitter").
	Base time.Duration
	// Max caps the backoff.
	Max time.Duration
}

// DefaultPolicy suits a shared object store: up to 6 attempts over at
// most about 5 seconds of backoff.
var DefaultPolicy = Policy{Attempts: 6, Base: 100 * time.Millisecond, Max: 2 * time.Second}

// Store retries the transient failures of the store it wraps.
type Store struct {
	next cas.Store
	p    Policy
}

// New wraps next. Zero fields of p take their values from DefaultPolicy.
func New(next cas.Store, p Policy) *Store {
	if p.Attempts <= 0 {
		p.Attempts = DefaultPolicy.Attempts
	}
	if p.Base <= 0 {
		p.Base = DefaultPolicy.Base
	}
	if p.Max <= 0 {
		p.Max = DefaultPolicy.Max
	}
	return &Store{next: next, p: p}
}

// Unwrap returns the wrapped store.
func (s *Store) Unwrap() cas.Store { return s.next }

// IsTransient reports whether err is worth retrying: an error a backend
// marked with cas.Transient (5xx, SlowDown, throttling), a network
// timeout, a reset, refused or broken connection, or a response cut
// short. The cas sentinels are never transient, even when wrapped in an
// error that is.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	for _, permanent := range []error{cas.ErrNotFound, cas.ErrExists, cas.ErrInvalidKey, cas.ErrCorrupt, context.Canceled} {
		if errors.Is(err, permanent) {
			return false
		}
	}
	if cas.IsTransient(err) {
		return true
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	for _, e := range connErrors {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	// A connection closed before any response: *url.Error wrapping io.EOF.
	var ue *url.Error
	if errors.As(err, &ue) && errors.Is(ue.Err, io.EOF) {
		return true
	}
	return false
}

// GaveUpError is the error of a call that failed transiently on every
// one of its attempts (more than one): the last attempt's error, and how
// many were made, for words such as "after 5 attempts".
type GaveUpError struct {
	Attempts int
	Err      error // the last attempt's
}

func (e *GaveUpError) Error() string { return fmt.Sprintf("after %d attempts: %v", e.Attempts, e.Err) }
func (e *GaveUpError) Unwrap() error { return e.Err }

// final marks an error that must be returned as is, never retried.
type final struct{ err error }

func (f final) Error() string { return f.err.Error() }

// do runs op until it succeeds, fails for good, runs out of attempts, or
// ctx is done.
func (s *Store) do(ctx context.Context, op func() error) error {
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			if attempt == 1 {
				return cas.NotStored(err) // no attempt was made
			}
			return err
		}
		err := op()
		var f final
		if errors.As(err, &f) {
			return f.err
		}
		if err == nil || !IsTransient(err) {
			return err
		}
		if ctx.Err() != nil {
			return err
		}
		if attempt >= s.p.Attempts {
			if attempt == 1 {
				return err // nothing was retried
			}
			return &GaveUpError{Attempts: attempt, Err: err}
		}
		if werr := s.wait(ctx, attempt); werr != nil {
			return fmt.Errorf("%w (while waiting to retry: %v)", werr, err)
		}
	}
}

// wait sleeps before attempt+1: uniformly in [0, min(Max, Base·2^(attempt-1))].
func (s *Store) wait(ctx context.Context, attempt int) error {
	ceil := s.p.Max
	if shift := attempt - 1; shift < 32 && s.p.Base<<shift > 0 && s.p.Base<<shift < ceil {
		ceil = s.p.Base << shift
	}
	d := time.Duration(rand.Int64N(int64(ceil) + 1))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Put implements cas.Store. See the package comment for how conditional
// creates are retried.
//
// Once a conditional create has met an existing object after a lost
// response, the object is known to be there: later attempts only read it
// back, so each attempt costs one request, not a put and a read. If the
// read finds it gone, attempts go back to creating it.
func (s *Store) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	// met is the ErrExists a create met after a lost response: from then
	// on the object is known to be there, and attempts only read it.
	mayHaveLanded, met := false, error(nil)
	err := s.do(ctx, func() error {
		if met == nil {
			err := s.next.Put(ctx, key, data, opts)
			if !opts.IfAbsent || !mayHaveLanded || !errors.Is(err, cas.ErrExists) {
				if IsTransient(err) {
					mayHaveLanded = true
				}
				return err
			}
			met = err
		}
		err := s.ownCreate(ctx, key, data, met)
		if errors.Is(err, errAbsent) {
			met = nil
		}
		return err
	})
	if mayHaveLanded && cas.IsNotStored(err) {
		// This attempt left nothing, but an earlier one may have landed:
		// the put as a whole may have, so its error must not say not. A
		// refusal stays its cause, for the words above (cas.RefusedError).
		var refused *cas.RefusedError
		if errors.As(err, &refused) {
			return fmt.Errorf("put %s: an earlier attempt may have landed; the last was refused: %w", key, refused)
		}
		return fmt.Errorf("put %s: an earlier attempt may have landed; the last failed: %s", key, err)
	}
	return err
}

// errAbsent marks ownCreate's finding that the object reported to exist
// is not there.
var errAbsent = errors.New("conflict reported but the object is absent")

// ownCreate decides a conditional create that met an existing object
// after an earlier attempt failed in a way that may have hidden its
// success: the create was ours exactly when the stored bytes are ours.
func (s *Store) ownCreate(ctx context.Context, key string, data []byte, exists error) error {
	got, err := s.next.Get(ctx, key, 0, -1)
	switch {
	case err == nil && bytes.Equal(got, data):
		return nil
	case err == nil:
		return exists
	case errors.Is(err, cas.ErrNotFound):
		// The store said the key exists, yet it is gone (deleted in
		// between, or S3's 409 ConditionalRequestConflict): nobody holds
		// the slot now, so create it again.
		return cas.Transient(fmt.Errorf("put %s: %w", key, errAbsent))
	default:
		return err // transient: the loop reads it again
	}
}

// Get implements cas.Store.
func (s *Store) Get(ctx context.Context, key string, off, n int64) ([]byte, error) {
	var b []byte
	err := s.do(ctx, func() error {
		var err error
		b, err = s.next.Get(ctx, key, off, n)
		return err
	})
	return b, err
}

// Stat implements cas.Store.
func (s *Store) Stat(ctx context.Context, key string) (cas.Info, error) {
	var info cas.Info
	err := s.do(ctx, func() error {
		var err error
		info, err = s.next.Stat(ctx, key)
		return err
	})
	return info, err
}

// List implements cas.Store. A listing that fails part way resumes after
// the last key delivered, so fn sees every key once, in order. An error
// returned by fn stops the listing and is returned as is.
func (s *Store) List(ctx context.Context, prefix, startAfter string, fn func(cas.Info) error) error {
	after := startAfter
	return s.do(ctx, func() error {
		var fnErr error
		err := s.next.List(ctx, prefix, after, func(i cas.Info) error {
			if err := fn(i); err != nil {
				fnErr = err
				return err
			}
			after = i.Key
			return nil
		})
		if fnErr != nil {
			return final{fnErr}
		}
		return err
	})
}

// Delete implements cas.Store. Deleting is idempotent, so it is retried
// like a read.
func (s *Store) Delete(ctx context.Context, key string) error {
	return s.do(ctx, func() error { return s.next.Delete(ctx, key) })
}
