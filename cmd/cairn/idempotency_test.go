package main

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestIdempotencyHint pins the safe move commit and reply add to a step
// that may have been written, with a key and without: no test reaches it
// through a lost answer, and each command says it in its own words.
func TestIdempotencyHint(t *testing.T) {
	for _, c := range []struct {
		command, lands, key, want string
	}{
		{"commit", "step", "", "to land a step once, however often its answer is lost, give each commit an --idempotency-key and its retries the same"},
		{"commit", "step", "k", "retry with the same --idempotency-key: if the step landed, the retry prints it and writes no second one"},
		{"reply", "reply", "", "to land a reply once, however often its answer is lost, give it an --idempotency-key and its retries the same"},
		{"reply", "reply", "k", "retry with the same --idempotency-key: if the reply landed, the retry prints it and writes no second one"},
	} {
		fs := newFlags(&env{stdout: io.Discard}, c.command, "")
		f := newIdempotencyFlag(fs, c.lands)
		args := []string{}
		if c.key != "" {
			args = append(args, "--idempotency-key", c.key)
		}
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		lost := fmt.Errorf("commit s@2: %w", cairn.ErrMaybeWritten)
		err := f.maybeWritten(lost)
		if got, want := err.Error(), lost.Error()+" ("+c.want+")"; got != want {
			t.Errorf("%s, key %q:\n got %q\nwant %q", c.command, c.key, got, want)
		}
		if !errors.Is(err, cairn.ErrMaybeWritten) {
			t.Errorf("%s, key %q: the hint hides ErrMaybeWritten", c.command, c.key)
		}
		if other := errors.New("other"); f.maybeWritten(other) != other {
			t.Errorf("%s, key %q: another error was changed", c.command, c.key)
		}
	}
}
