package cas

// UnavailableError is a request that got no answer from the store: the
// store could not be reached (nothing listening, a host name that does
// not resolve, a network that drops the connection), it did not answer
// in time, or the client found no credentials to sign the request with.
// Like RefusedError it keeps the backend's error as its text and cause,
// and says what failed in parts that the layers above word for the
// user, so that no message needs the store key or the SDK's text.
//
// It is not a verdict on retrying: the retry wrapper retries what it
// retried before (a refused or reset connection, a timeout), whether or
// not the backend also said it in these words. A put that failed so may
// have reached the store unless it is also marked NotStored.
type UnavailableError struct {
	Op  string // the request: "put", "get", "stat", "list" or "delete"
	Key string // its key or, for a list, its prefix
	// Why is the failure in words, to follow the store's URL: "could not
	// be reached (connection refused)", "did not answer (…)".
	Why string
	Err error // the backend's error
}

func (e *UnavailableError) Error() string { return e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }
