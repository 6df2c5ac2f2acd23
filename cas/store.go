// Package cas defines cairn's object-store contract and the content
// identifiers shared by every layer above it.
//
// A Store is deliberately small: whole-object puts, ranged gets, stat,
// ordered listing and delete. Everything cairn needs to be crash-safe and
// fenced is built from two guarantees every backend must give:
//
//   - Atomic put: a reader sees either no object or the whole object
//     that was put, never a prefix or a mix of two writes.
//   - Conditional create: Put with PutOptions.IfAbsent succeeds for
//     exactly one of any number of racing writers of the same key; every
//     other writer gets ErrExists and its bytes are never visible.
//
// and read-after-write consistency: once Put returns nil, Get, Stat and
// List observe the object.
//
// Backends translate their own errors onto the sentinels below so that
// callers only ever use errors.Is. Retry, request counting and fault
// injection are wrappers (see packages metered, retry and faulty), never
// backend code.
package cas

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Sentinel errors shared by every backend and by the layers above.
var (
	// ErrNotFound: the key does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists: a conditional create lost because the key already exists.
	ErrExists = errors.New("already exists")
	// ErrCorrupt: stored bytes failed verification (hash, checksum or format).
	ErrCorrupt = errors.New("corrupt object")
	// ErrInvalidKey: the key is not a valid object key (see ValidateKey).
	ErrInvalidKey = errors.New("invalid key")
	// ErrInvalidURL: a store URL a backend cannot parse (its caller's
	// input, never a failure of the store).
	ErrInvalidURL = errors.New("invalid store url")
	// ErrInvalidSetting: a setting a backend reads from the environment
	// ($CAIRN_S3_TIMEOUT, …) that it cannot use: its caller's input, as
	// ErrInvalidURL, but no fault of the URL, which its error does not
	// blame (see URLError).
	ErrInvalidSetting = errors.New("invalid setting")
)

// URLError is the error a backend's Open returns for err, its failure
// to parse the store's URL: err matching ErrInvalidURL, unless it is an
// ErrInvalidSetting, which is said as it is.
func URLError(err error) error {
	if errors.Is(err, ErrInvalidSetting) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrInvalidURL, err)
}

// Locator is implemented by a store that can say where its objects are
// more exactly than the URL it was opened with: an s3:// URL leaves the
// server to the environment (AWS_ENDPOINT_URL, a profile's endpoint_url),
// so one URL may name two stores. Local caches key a store by its
// location when it has one, so two stores never share their entries.
type Locator interface {
	// Location names the server, bucket and prefix of the store's
	// objects.
	Location() string
}

// PutOptions modify a Put.
type PutOptions struct {
	// IfAbsent makes the put a conditional create: it fails with
	// ErrExists if the key already exists (S3 If-None-Match: *).
	IfAbsent bool
}

// Info describes one stored object.
type Info struct {
	Key     string
	Size    int64
	ModTime time.Time
	// NotObject, when set, says the key holds no object but something
	// else a local store found in its place: "a link", "a directory" (an
	// empty one), "a pipe", "a device", "a socket" (see NotObjectError).
	// Size and ModTime are then zero. Only verify wants such entries;
	// every other caller of List passes them over.
	NotObject string
	// Apart, with NotObject, says that what stands at Key stands beside
	// the object Key rather than in its place, so that a Get or Stat of
	// Key never meets it: an S3 server's folder marker "Key/" (what a
	// console makes). A server that keeps objects as files (versitygw)
	// refuses to create Key while it stands; others keep both, and list
	// no such entry where the object Key stands too.
	Apart bool
}

// Store is a flat key → bytes object store. Keys are '/'-separated paths
// accepted by ValidateKey. Implementations must be safe for concurrent use
// by many goroutines and, for shared backends, many processes.
type Store interface {
	// Put stores data under key atomically. With opts.IfAbsent it is a
	// conditional create that returns ErrExists if the key exists. Put
	// must not keep data once it has returned: a caller may reuse the
	// buffer of a put that succeeded (the spill writer does). A failed
	// put may have taken effect unless it is ErrExists or marked
	// NotStored (the backend knows nothing of it can be seen).
	Put(ctx context.Context, key string, data []byte, opts PutOptions) error

	// Get returns n bytes of the object starting at off; n < 0 means to
	// the end. Reading past the end returns the bytes that exist. A
	// missing key is ErrNotFound.
	Get(ctx context.Context, key string, off, n int64) ([]byte, error)

	// Stat returns the object's Info, or ErrNotFound.
	Stat(ctx context.Context, key string) (Info, error)

	// List calls fn for every key that starts with prefix and sorts
	// strictly after startAfter (empty: from the beginning), in ascending
	// byte order. If fn returns an error, List stops and returns it.
	// A backend that can find something other than an object at a key
	// (a local directory, an S3 folder marker) lists it too, with
	// Info.NotObject set.
	List(ctx context.Context, prefix, startAfter string, fn func(Info) error) error

	// Delete removes key. Deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
}
