package cas

import "errors"

// Transient marks err as transient: the request failed in a way that a
// later attempt may not (a 5xx or SlowDown reply, a throttled or timed
// out request, an injected fault). Backends mark the errors they know to
// be transient; the retry wrapper retries them. Transient(nil) is nil.
//
// A transient error says nothing about whether the request took effect:
// a put whose response was lost may have been applied.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return &transientError{err: err}
}

// IsTransient reports whether err, or any error it wraps, was marked
// with Transient.
func IsTransient(err error) bool {
	var te *transientError
	return errors.As(err, &te)
}

type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }
