package cairn_test

import (
	"errors"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestNotFoundWhyWords: each reason a step is not there says what is
// missing and why once, never "not found: …", and matches ErrNotFound
// only (not ErrRemoved): the words the command line, the HTTP API and
// MCP show.
func TestNotFoundWhyWords(t *testing.T) {
	for _, c := range []struct {
		err  cairn.NotFoundError
		want string
	}{
		{cairn.NotFoundError{Session: "d", Step: 3, Why: cairn.NotFoundLost}, "step d@3 not found: the store has lost it (cairn verify lists what is missing)"},
		{cairn.NotFoundError{Session: "x", Step: 2, Why: cairn.NotFoundLost, Below: 3}, "step x@2 not found: the store has lost a step of the history of x below its step 3 (cairn verify lists what is missing)"},
		{cairn.NotFoundError{Session: "y", Step: 2, Why: cairn.NotFoundBeforeStart, Start: 5}, "step y@2 not found: the session's history starts at step 5"},
		{cairn.NotFoundError{Session: "o", Step: 1, Why: cairn.NotFoundOtherStore}, "step o@1 not found: it was read through another workspace, and this workspace's store does not hold it"},
	} {
		err := error(&c.err)
		if err.Error() != c.want || !errors.Is(err, cairn.ErrNotFound) || errors.Is(err, cairn.ErrRemoved) {
			t.Errorf("%+v: %q; want ErrNotFound saying %q", c.err, err, c.want)
		}
	}
}
