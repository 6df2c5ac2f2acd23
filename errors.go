package cairn

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/retry"
	"github.com/cairnlog/cairn/cas/s3compat"
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

// Errors. Every error the API returns that has one of these causes
// matches it with errors.Is; callers need no other package to tell them
// apart. The set is closed: an error matching none of them is a failure
// to use the store (local I/O, a server's reply that is none of the
// above) or the caller's own (a callback's error, a cancelled context),
// passed through. A request the store refused outright (bad
// credentials, a bucket that does not exist) is said in words, naming
// the store by its URL, wraps the backend's *cas.RefusedError, and is
// ErrRefused; a store that could not be reached is said likewise, wraps
// the backend's *cas.UnavailableError, and is ErrUnavailable.
var (
	// ErrNotFound: the session or step does not exist, was pruned or
	// removed, or is one the store has lost (see NotFoundLost). A
	// session, or a step of it, that is not there to read is a
	// *NotFoundError, which names them and says why.
	ErrNotFound = errors.New("not found")
	// ErrConflict: another writer already wrote the step this commit or
	// fork wanted, or an expected head did not hold. Nothing was written.
	ErrConflict = errors.New("conflict")
	// ErrCorrupt: stored bytes failed verification (hash, checksum or
	// format), or an object the store's own records name is missing.
	ErrCorrupt = errors.New("corrupt object")
	// ErrInvalid: bad input from the caller: a session name, step
	// reference, store URL, status, or a state that is not valid JSON.
	ErrInvalid = errors.New("invalid argument")
	// ErrLimit: something read from the store or given by the caller
	// exceeds a bound (see Limits and docs/limits.md).
	ErrLimit = errors.New("limit exceeded")
	// ErrUnavailable: the store could not be reached or did not answer
	// (nothing listening at its address, a host name that does not
	// resolve, a TLS setting that does not fit the server, a timeout on
	// every attempt), answered only with server errors (5xx, SlowDown),
	// or no credentials or region were found to sign its requests with
	// (then Open fails, before any request). What is worth retrying (a
	// refused or reset connection, a timeout, a server error) was retried
	// as far as the store's attempts allow; a later call may succeed. A
	// commit or fork so failed did not write its step unless it is also
	// ErrMaybeWritten.
	ErrUnavailable = errors.New("the store could not be reached")
	// ErrRefused: the store answered, and refused the request outright,
	// before acting on it: credentials it does not accept, a policy that
	// denies the request, a bucket that does not exist, a region other
	// than the bucket's; or, on a local store, a file this user may not
	// use or a disk that is full. It was not retried: the store answers
	// the same until its configuration or the store URL changes. A
	// refused write stored nothing, unless the error is also
	// ErrMaybeWritten (an earlier attempt of the same put may have
	// landed).
	ErrRefused = errors.New("the store refused the request")
)

// Refinements of the kinds above, for callers that act on them.
var (
	// ErrAwaitingInput (an ErrConflict): a commit on a head that awaits
	// input, neither replying nor withdrawing the question (see
	// CommitOptions.Reply and Withdraw).
	ErrAwaitingInput = fmt.Errorf("%w: the head awaits input", ErrConflict)
	// ErrNotAwaiting (an ErrConflict): a reply or a withdrawal
	// (CommitOptions.Reply, Withdraw) on a head that awaits no input:
	// there is no question to answer or withdraw (the wrong session, or
	// someone answered or withdrew it first).
	ErrNotAwaiting = fmt.Errorf("%w: the head awaits no input", ErrConflict)
	// ErrClosed (an ErrInvalid): the workspace was closed (Close) before
	// the call began: using it afterwards is the caller's mistake. A call
	// already in flight when Close was called ends as it would have.
	ErrClosed error = &kindError{kind: ErrInvalid, err: errors.New("the workspace is closed")}
	// ErrKeyUsed (an ErrConflict): a commit's idempotency key
	// (CommitOptions.IdempotencyKey) is held by the step it met (the
	// session's head, or the step in the slot it wanted) and that step
	// has another parent, state, record or status: the key was used for
	// another step. Nothing was written.
	ErrKeyUsed = fmt.Errorf("%w: the idempotency key was used for another step", ErrConflict)
	// ErrRemoved (an ErrNotFound): the session was removed (Remove,
	// cairn rm): its head and every step it had read as gone.
	ErrRemoved = fmt.Errorf("%w: the session was removed", ErrNotFound)
	// ErrMaybeWritten: whether a commit's or fork's step is in its
	// session's history is not known: its put failed after it may have
	// reached the store (a lost response, a timeout), or its history
	// could not be read after the put, or a fork to a new session's name
	// had not ended when the session's first step landed beside it. The
	// session re-reads its head at its next commit, which builds on
	// whatever is there.
	ErrMaybeWritten = errors.New("the step may have been written; the session's next commit reads its head again")
)

// DamageHint says what a user of the command line, the HTTP API or the
// MCP server can do about err if the store's damage is its cause
// (ErrCorrupt): run cairn verify, which names every damaged object, what
// the damage means, and what to do. It is "" for any other error, and for one that already
// says so.
func DamageHint(err error) string {
	if !errors.Is(err, ErrCorrupt) || strings.Contains(err.Error(), "cairn verify") {
		return ""
	}
	return "the store is damaged: cairn verify names every damaged object, what it means and what to do"
}

// mayHaveLanded reports whether a failed put may still have taken
// effect: anything but a refusal the store gave before acting, or a
// failure the backend knows left nothing (cas.NotStored).
func mayHaveLanded(err error) bool {
	return !errors.Is(err, cas.ErrExists) && !errors.Is(err, cas.ErrNotFound) && !cas.IsNotStored(err)
}

// kinds are the API's errors, in the order classify tries the causes.
var kinds = []error{ErrNotFound, ErrConflict, ErrCorrupt, ErrInvalid, ErrLimit, ErrUnavailable, ErrRefused}

// kindError gives err one of the API's kinds without changing its text.
type kindError struct {
	kind error
	err  error
}

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.err, e.kind} }

// classify returns err marked with the API error its cause belongs to,
// so that errors.Is works for callers without importing the packages
// below this one. Its text is unchanged.
func classify(err error) error {
	if err == nil {
		return nil
	}
	for _, k := range kinds {
		if errors.Is(err, k) {
			return err
		}
	}
	var kind error
	var un *cas.UnavailableError
	var re *cas.RefusedError
	switch {
	case errors.As(err, &un):
		kind = ErrUnavailable
	case errors.As(err, &re):
		kind = ErrRefused
	case errors.Is(err, cas.ErrCorrupt):
		kind = ErrCorrupt
	case errors.Is(err, tree.ErrLimit):
		kind = ErrLimit
	case errors.Is(err, manifest.ErrNoSession), errors.Is(err, manifest.ErrPruned):
		kind = ErrNotFound
	case errors.Is(err, manifest.ErrSlotTaken):
		kind = ErrConflict
	case errors.Is(err, tree.ErrSyntax), errors.Is(err, tree.ErrPatch), errors.Is(err, tree.ErrUnsafeLink), errors.Is(err, tree.ErrUnsupportedFile), errors.Is(err, tree.ErrUnsafeName), errors.Is(err, tree.ErrTooDeep), errors.Is(err, tree.ErrUnreadable), errors.Is(err, manifest.ErrInvalidName), errors.Is(err, manifest.ErrInvalidGCOptions),
		errors.Is(err, cas.ErrInvalidKey), errors.Is(err, cas.ErrInvalidURL), errors.Is(err, cas.ErrInvalidSetting):
		kind = ErrInvalid
	default:
		return err
	}
	return &kindError{kind: kind, err: err}
}

// openedTo classifies *err in place and says a store that could not be
// used in words (storeWords): deferred by Open, which has no workspace
// yet; the methods defer Workspace.classifyTo.
func openedTo(url string, err *error) { *err = storeWords(url, classify(*err), "") }

// classifyTo classifies *err in place and says a request the store
// refused or could not be asked in words (storeWords): deferred by every exported method that
// returns an error.
func (w *Workspace) classifyTo(err *error) { *err = w.refused(classify(*err), "") }

// classifyWrite is classifyTo for a call that writes a step (commit,
// fork): its words about a refusal say whether step was written.
func (w *Workspace) classifyWrite(err *error, step string) { *err = w.refused(classify(*err), step) }

// refused is storeWords for the workspace's store (see there).
func (w *Workspace) refused(err error, step string) error {
	url := ""
	if w != nil {
		url = w.url
	}
	return storeWords(url, err, step)
}

// storeRefused is an error whose cause is a request the store refused
// (cas.RefusedError: bad credentials, a bucket that does not exist) or
// that got no answer from it (cas.UnavailableError: nothing listening,
// no such host, a timeout), said in the user's words. It matches what
// its cause matches.
type storeRefused struct {
	msg string
	err error
}

func (e *storeRefused) Error() string { return e.msg }
func (e *storeRefused) Unwrap() error { return e.err }

// storeWords says err in words if its cause is a request the store
// refused or could not be asked, or a store that could not be opened for
// lack of what every request needs (credentials, a region): the store
// as url names it ("" for none), why, and what went undone ("the store s3://b/p refused the request: the bucket does
// not exist (…): could not read the head hint of session s"; "the store
// minio://h:1/b/p could not be reached (connection refused: …), after 5
// attempts: could not read the head hint of session s"), never the
// object's store key nor the SDK's text, which name its internals. step
// names the step a commit or fork was writing ("the step"; "" for any
// other call), so that its error says whether it was written. Any other
// error is returned as it is.
func storeWords(url string, err error, step string) error {
	var re *cas.RefusedError
	var un *cas.UnavailableError
	var said *storeRefused
	if err == nil || errors.As(err, &said) {
		return err
	}
	var op, key, why string
	switch {
	case errors.As(err, &re):
		op, key, why = re.Op, re.Key, "refused the request: "+re.Why
	case errors.As(err, &un):
		op, key, why = un.Op, un.Key, un.Why
		var gave *retry.GaveUpError
		if errors.As(err, &gave) {
			why += fmt.Sprintf(", after %d attempts", gave.Attempts)
		}
	default:
		return err
	}
	store := "the store"
	if url != "" {
		store += " " + showURL(url)
	}
	if op == "open" {
		return &storeRefused{msg: store + " " + why, err: err}
	}
	session, n, stepKey := manifest.ParseStepKey(key)
	stepPut := stepKey && op == "put"
	var ne *cas.NotObjectError
	if errors.As(err, &ne) {
		// Not a refusal but the store's damage, said as what stands in
		// whose place: "the store ./s holds a link where step a@3
		// belongs: remove it to repair".
		why = fmt.Sprintf("holds %s where %s belongs", ne.What, manifest.DescribePlace(ne.Key, op == "list", ne.Parent))
	}
	var undone string
	switch op {
	case "put":
		what := manifest.DescribeKey(key)
		if stepKey {
			what = fmt.Sprintf("step %s@%d", session, n)
		}
		undone = what + " was not written"
		switch {
		case ne != nil:
			undone = "remove it to repair; " + undone
		case cas.IsNotStored(err):
		case re != nil:
			undone = what + " may have been written (an earlier attempt may have reached the store)"
		case un.ServerError:
			undone = what + " may have been written (a server error does not say whether the object was stored)"
		default:
			undone = what + " may have been written (it may have reached the store before the answer was lost)"
		}
	case "list":
		undone = "could not list " + manifest.DescribePrefix(key)
	case "delete":
		undone = manifest.DescribeKey(key) + " was not deleted"
	default:
		undone = "could not read " + manifest.DescribeKey(key)
	}
	if ne != nil && op != "put" {
		undone = "remove it to repair"
	}
	switch {
	case step == "":
	case stepPut:
		if errors.Is(err, ErrMaybeWritten) {
			undone += "; the session's next commit reads its head again"
		}
	case errors.Is(err, ErrMaybeWritten):
		undone += "; " + step + " may have been written (the session's next commit reads its head again)"
	default:
		undone += "; " + step + " was not written"
	}
	return &storeRefused{msg: fmt.Sprintf("%s %s: %s", store, why, undone), err: err}
}

// showURL returns a store URL as a message shows it: as given, less any
// password.
func showURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.User == nil {
		return raw
	}
	return s3compat.ShowURL(u)
}

// invalid marks err as ErrInvalid without changing its text.
func invalid(err error) error { return &kindError{kind: ErrInvalid, err: err} }

// sayOnce is an error whose words say what its causes would say again:
// it matches them (errors.Is, errors.As) without repeating their text.
type sayOnce struct {
	msg  string
	errs []error
}

func (e *sayOnce) Error() string   { return e.msg }
func (e *sayOnce) Unwrap() []error { return e.errs }

// nilContext is the error of a call named by what given a nil
// context.Context (net/http's NewRequestWithContext says "nil Context"):
// returned before anything is read or written.
func nilContext(what string) error {
	return invalid(fmt.Errorf("%s: nil context", what))
}

// nilArg is the error of a call named by what given a nil callback,
// io.Writer or other argument it needs, said as "no function given (fn
// is nil)": before anything is read or written.
func nilArg(what, thing, name string) error {
	return invalid(fmt.Errorf("%s: no %s given (%s is nil)", what, thing, name))
}
