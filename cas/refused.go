package cas

// RefusedError is a request the store refused outright, before acting
// on it: bad credentials, a denied permission, a bucket that does not
// exist, a wrong region. It keeps the backend's error as its text and
// cause, and says what was refused in parts that the layers above word
// for the user (the root package names the store by its URL and the
// object by what it is to them): no message needs the store key or the
// server's reply.
//
// A backend returns it (wrapped) only for refusals it can tell from
// other failures; anything else stays as it was.
type RefusedError struct {
	Op  string // the request: "put", "get", "stat", "list" or "delete"
	Key string // its key or, for a list, its prefix
	// Why is the refusal in words, with what to check: "access denied
	// (…)", "the bucket does not exist (…)".
	Why string
	Err error // the backend's error
}

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// NotObjectError is damage to a local store that no retry removes:
// something other than an object's file (a link, a directory, a pipe, a
// device) stands where the object Key, or a directory holding it,
// belongs. The store reads nothing through it and writes nothing over
// it; removing it repairs the store. A backend returns it (wrapped, as
// the cause of a *RefusedError) from any request on Key.
type NotObjectError struct {
	Key string // the object's key; for a list, its prefix
	// What is what stands there: "a link", "a directory", "a pipe", "a
	// device", "a socket" or "a special file".
	What string
	// Parent says it stands where a directory holding Key belongs, not
	// at Key itself (always, for a list).
	Parent bool
}

func (e *NotObjectError) Error() string {
	if e.Parent {
		return e.What + " stands where a directory of the object's path belongs"
	}
	return e.What + " stands where the object's file belongs"
}
