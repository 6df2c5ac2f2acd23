package castest

import (
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/retry"
)

// RunThroughFaults runs the conformance suite through the retry wrapper
// over stores whose responses all pass through l, and fails if l dropped
// none of them. open returns a fresh store (its n-th) whose HTTP client
// uses l: a backend's test is then a few lines, whatever l's faults.
func RunThroughFaults(t *testing.T, l *LossyTransport, open func(t *testing.T, n int) cas.Store) {
	n := 0
	Run(t, func(t *testing.T) cas.Store {
		n++
		return retry.New(open(t, n), retry.Policy{Attempts: 30, Base: time.Millisecond, Max: 5 * time.Millisecond})
	})
	what := "lost"
	if l.cut {
		what = "cut"
	}
	t.Logf("responses %s: %d", what, l.Drops())
	if l.Drops() == 0 {
		t.Fatalf("no response was %s", what)
	}
}
