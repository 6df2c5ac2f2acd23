package cairn

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairnlog/cairn/cas"
)

// EachHead calls fn with the head step of every session whose name starts
// with prefix ("" for every session), in name order, holding none of them
// afterwards: the walk behind listing sessions and a human's inbox.
// Sessions with no steps and removed ones are passed over. So is a session
// whose head the store's damage keeps from being read: the walk goes on,
// and once it is done EachHead returns an *UnreadableError naming each such
// session (a damaged session does not hide the others). An error from fn,
// or any other error reading a head, stops the walk and is returned.
func (w *Workspace) EachHead(ctx context.Context, prefix string, fn func(head *Step) error) (err error) {
	if err := w.enterCtx(ctx, "heads"); err != nil {
		return err
	}
	if fn == nil {
		return nilArg("heads", "function", "fn")
	}
	defer w.exit()
	defer w.classifyTo(&err)
	if prefix != "" && ValidSession(prefix) != nil {
		// Any start of a session name is itself a session name.
		return invalid(fmt.Errorf("%q is not the start of a session name: want %s", prefix, SessionNameRule))
	}
	var damaged UnreadableError
	// inner is what stopped the walk from inside: fn's error, passed
	// through as it is, or a head's, which names its session. Any other
	// error is the listing's own (a cancelled ctx, the store), said so.
	var inner error
	err = w.repo.SessionsPrefixed(ctx, prefix, func(name string) error {
		head, err := w.readHead(ctx, name)
		switch {
		case err == nil:
			inner = fn(head)
			return inner
		case errors.Is(err, ErrNotFound):
			return nil // marked but never committed, or removed
		case isDamage(err) && ctx.Err() == nil:
			damaged.Sessions = append(damaged.Sessions, name)
			damaged.Errs = append(damaged.Errs, err)
			return nil
		}
		inner = err
		return err
	})
	switch {
	case inner != nil:
		return inner
	case err != nil:
		return fmt.Errorf("list sessions: %w", err)
	}
	if len(damaged.Sessions) > 0 {
		return &damaged
	}
	return nil
}

// UnreadableError reports the sessions a walk over a store's sessions
// (EachHead, an export) passed over because the store is damaged there:
// each error matches ErrCorrupt. Everything else was walked; the error
// comes at the end, so a caller may keep what it got and still report the
// damage (cairn verify names the damaged objects).
type UnreadableError struct {
	// Sessions are the sessions passed over, in name order.
	Sessions []string
	// Errs are their errors, in the same order.
	Errs []error
}

// Error says how many sessions could not be read, and why each.
func (e *UnreadableError) Error() string {
	if e == nil {
		return "<nil>"
	}
	what := fmt.Sprintf("%d sessions", len(e.Errs))
	if len(e.Errs) == 1 {
		what = "1 session"
	}
	return fmt.Sprintf("%s could not be read: %v", what, errors.Join(e.Errs...))
}

// Unwrap returns the sessions' errors.
func (e *UnreadableError) Unwrap() []error {
	if e == nil {
		return nil
	}
	return e.Errs
}

// isDamage says err is the store's damage to one session, which a walk
// over every session reports and passes over: a corrupt object, or
// something a local store found in an object's place (a link where the
// session's first step belongs: cas.NotObjectError), which no retry
// mends and which stopped a listing of every session where it stood.
func isDamage(err error) bool {
	var ne *cas.NotObjectError
	return errors.Is(err, ErrCorrupt) || errors.As(err, &ne)
}
