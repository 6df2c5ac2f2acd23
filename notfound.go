package cairn

import (
	"fmt"

	"github.com/cairnlog/cairn/manifest"
)

// NotFoundWhy says why a session, or a step of it, is not there to read
// (NotFoundError.Why).
type NotFoundWhy int

const (
	// NotFoundNoSteps: the session has no steps: none was ever committed
	// under its name (a mistyped name, or one not used yet).
	NotFoundNoSteps NotFoundWhy = iota + 1
	// NotFoundRemoved: the session was removed (Workspace.Remove, cairn
	// rm). A commit to its name starts it again.
	NotFoundRemoved
	// NotFoundPastHead: the step is above the session's head
	// (NotFoundError.Head): it was never written.
	NotFoundPastHead
	// NotFoundPruned: the step is below where the session's history
	// starts now (NotFoundError.Start): it was pruned (Workspace.Prune).
	NotFoundPruned
	// NotFoundBeforeStart: the step is below where the session's
	// history starts (NotFoundError.Start), a first step with no step
	// before it: a fork's history that goes down into a session whose
	// name was removed and written again starts at that session's new
	// first step.
	NotFoundBeforeStart
	// NotFoundLost: the step is in the session's history, at or below
	// its head, and the store has lost its object, or, if
	// NotFoundError.Below is not 0, an object of the history the session
	// was forked from, below its first step: the store is damaged, and
	// cairn verify lists what is missing.
	NotFoundLost
	// NotFoundOtherStore: the step was read through another workspace,
	// whose store is not this one's, and this workspace's store does
	// not hold it.
	NotFoundOtherStore
)

// NotFoundError is the error of a session, or a step of it, that is not
// there to read: it names them, says why, and says it once, in the words
// the command line and the HTTP API show: "session s has no steps",
// "session s was removed", "step s@3: session s has no steps", "step
// s@3: the session was removed", "step s@9: the session's head is step
// 5", "step s@1: pruned (the session's history starts at step 2)",
// "step s@3: the store has lost it (cairn verify lists what is
// missing)". It
// matches ErrNotFound, and ErrRemoved if Why is NotFoundRemoved. A caller
// that says these in its own words reads them with errors.As.
type NotFoundError struct {
	// Session is the session asked for.
	Session string
	// Step is the number of the step asked for; 0 if the session itself
	// was (its head, its history, a removal or a check of it).
	Step uint64
	// Why says why it is not there.
	Why NotFoundWhy
	// Head is the session's head when Why is NotFoundPastHead.
	Head uint64
	// Start is the step the session's history starts at when Why is
	// NotFoundPruned or NotFoundBeforeStart; and, when Why is
	// NotFoundRemoved and Start is not 0, the step the history of the
	// session's name starts at now, which was committed to again since
	// the removal.
	Start uint64
	// InForks, when Why is NotFoundRemoved, says that the step was in
	// the session's history when it was removed: a session forked from
	// it above the step holds it still, as its step of the same number,
	// and the words say where to read it.
	InForks bool
	// Below is, when Why is NotFoundLost and the lost object is one of
	// the history the session was forked from, the session's first
	// step, which the asked step lies below; 0 if the step's own object
	// is lost.
	Below uint64
}

// Error says what is not there, "not found", and why, once ("<nil>"
// for a nil *NotFoundError): "session s not found: it has no steps",
// "step s@9 not found: the session's head is step 5". Scripts that read
// a command's error tell a missing session or step by "not found".
func (e *NotFoundError) Error() string {
	if e == nil {
		return "<nil>"
	}
	if e.Step == 0 {
		switch e.Why {
		case NotFoundNoSteps:
			return "session " + e.Session + " not found: it has no steps"
		case NotFoundRemoved:
			return "session " + e.Session + " not found: it was removed"
		}
		return "session " + e.Session + " not found" + e.because()
	}
	return fmt.Sprintf("step %s@%d not found%s", e.Session, e.Step, e.because())
}

// because is ": " and why, or nothing if e says no reason.
func (e *NotFoundError) because() string {
	if w := e.why(); w != "" {
		return ": " + w
	}
	return ""
}

// Reason says what is not there and why without saying "not found",
// for words whose context says it already, as an HTTP 404's code does:
// "session s has no steps", "step s@9: the session's head is step 5".
func (e *NotFoundError) Reason() string {
	if e == nil {
		return "<nil>"
	}
	why := e.why()
	if why == "" {
		why = ErrNotFound.Error()
	}
	if e.Step == 0 {
		return why
	}
	return fmt.Sprintf("step %s@%d: %s", e.Session, e.Step, why)
}

// why says why the session or step is not there ("" if Why is none
// of the reasons).
func (e *NotFoundError) why() string {
	switch e.Why {
	case NotFoundNoSteps:
		return "session " + e.Session + " has no steps"
	case NotFoundRemoved:
		if e.Step == 0 {
			return "session " + e.Session + " was removed"
		}
		// "step s@3" has named the session already.
		why := "the session was removed"
		if e.InForks {
			why += fmt.Sprintf("; if a session was forked from %s above step %d, its history still holds this step, as its step %d (cairn log FORK lists it)", e.Session, e.Step, e.Step)
		}
		if e.Start > 0 {
			why += fmt.Sprintf("; %s was committed to again since, and its history starts at step %d", e.Session, e.Start)
		}
		return why
	case NotFoundPastHead:
		return fmt.Sprintf("the session's head is step %d", e.Head)
	case NotFoundPruned:
		return fmt.Sprintf("pruned (the session's history starts at step %d)", e.Start)
	case NotFoundBeforeStart:
		return fmt.Sprintf("the session's history starts at step %d", e.Start)
	case NotFoundLost:
		if e.Below > 0 {
			return fmt.Sprintf("the store has lost a step of the history of %s below its step %d (cairn verify lists what is missing)", e.Session, e.Below)
		}
		return "the store has lost it (cairn verify lists what is missing)"
	case NotFoundOtherStore:
		return "it was read through another workspace, and this workspace's store does not hold it"
	}
	return ""
}

// Is reports whether e is target's kind: ErrNotFound always, ErrRemoved
// for a removed session; and, for the packages below this one,
// manifest.ErrNoSession for a session with no steps. A nil
// *NotFoundError is none of them.
func (e *NotFoundError) Is(target error) bool {
	if e == nil {
		return false
	}
	switch target {
	case ErrNotFound:
		return true
	case ErrRemoved:
		return e.Why == NotFoundRemoved
	case manifest.ErrNoSession:
		return e.Why == NotFoundNoSteps
	}
	return false
}

// noStepsErr is the error of session, which has no steps, asked for step n
// (0: the session itself).
func noStepsErr(session string, n uint64) error {
	return &NotFoundError{Session: session, Step: n, Why: NotFoundNoSteps}
}

// removedErr is the error of session, which was removed, asked for step n
// (0: the session itself).
func removedErr(session string, n uint64) error {
	return &NotFoundError{Session: session, Step: n, Why: NotFoundRemoved}
}

// ofSession returns err, the failure of op on session ("remove s"), with
// op's words before it, unless err is the session's NotFoundError, which
// names the session already: "session s was removed", not "remove s:
// session s was removed".
func ofSession(op, session string, err error) error {
	if nf, ok := err.(*NotFoundError); ok && nf.Session == session && nf.Step == 0 {
		return err
	}
	return fmt.Errorf("%s: %w", op, err)
}
