package cas

// UnavailableError is a request that got no usable answer from the
// store: the store could not be reached (nothing listening, a host name
// that does not resolve, a network that drops the connection, a TLS
// handshake that failed), it did not answer in time, it answered only
// with a server error (a 5xx, SlowDown), or the client found no
// credentials or region to sign the request with. Like RefusedError it
// keeps the backend's error as its text and cause, and says what failed
// in parts that the layers above word for the user, so that no message
// needs the store key or the SDK's text.
//
// It is not a verdict on retrying: the retry wrapper retries what it
// retried before (a refused or reset connection, a timeout, a server
// error), whether or not the backend also said it in these words. A put
// that failed so may have reached the store unless it is also marked
// NotStored.
type UnavailableError struct {
	// Op is the request: "put", "get", "stat", "list" or "delete"; or
	// "open" for a store whose configuration lacks what every request
	// needs (credentials, a region), found before any request was made.
	Op  string
	Key string // its key or, for a list, its prefix; "" for "open"
	// Why is the failure in words, to follow the store's URL: "could not
	// be reached (connection refused)", "did not answer (…)", "answered
	// with a server error (HTTP 500 InternalError)".
	Why string
	// ServerError is set when the store did answer, with a server error
	// worth retrying: a put so answered may still have been stored (some
	// S3 servers store an object and then fail the reply).
	ServerError bool
	Err         error // the backend's error
}

func (e *UnavailableError) Error() string { return e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }
