package cas

import "errors"

// NotStored marks err as the error of a put that took no effect: the
// backend knows that nothing of it can be seen (it failed before the
// object was named, as a local store's write that ran out of space). A
// put error not so marked may have landed, ErrExists aside, for all a
// caller can tell. NotStored(nil) is nil.
func NotStored(err error) error {
	if err == nil {
		return nil
	}
	return &notStoredError{err: err}
}

// IsNotStored reports whether err, or any error it wraps, was marked
// with NotStored.
func IsNotStored(err error) bool {
	var ne *notStoredError
	return errors.As(err, &ne)
}

type notStoredError struct{ err error }

func (e *notStoredError) Error() string { return e.err.Error() }
func (e *notStoredError) Unwrap() error { return e.err }
