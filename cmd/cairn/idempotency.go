package main

import (
	"errors"
	"fmt"

	"github.com/cairnlog/cairn"
)

// idempotencyFlag is the --idempotency-key flag of a command that lands
// one step (commit, reply): its help, its check and the hint said when
// the step may have landed unseen, in the command's words.
type idempotencyFlag struct {
	fs      *flagSet
	key     string
	command string // the command, which a user gives the key: "commit", "reply"
	lands   string // what the command lands: "step", "reply"
}

// newIdempotencyFlag defines --idempotency-key on fs, the flags of a
// command that lands one thing, named by lands: "step" for commit,
// "reply" for reply.
func newIdempotencyFlag(fs *flagSet, lands string) *idempotencyFlag {
	f := &idempotencyFlag{fs: fs, command: fs.Name(), lands: lands}
	fs.StringVar(&f.key, "idempotency-key", "", fmt.Sprintf("name this %s `K` (1-128 printable ASCII characters, no spaces; a UUID, say) and give the same K to every retry of it: a retry whose %s already landed prints that step, marked already written, and writes no second one; K on another step is a conflict (exit 3)", f.command, f.lands))
	return f
}

// check refuses a given key that no step could hold (a usage error);
// call it once the flags are parsed.
func (f *idempotencyFlag) check() error {
	if !given(f.fs, "idempotency-key") {
		return nil
	}
	if err := cairn.ValidIdempotencyKey(f.key); err != nil {
		return usagef("--idempotency-key %q: want %s", f.key, cairn.IdempotencyKeyRule)
	}
	return nil
}

// maybeWritten adds to err, if it is cairn.ErrMaybeWritten, the one safe
// move: a retry with the same key, or, without one, a key the next time.
// Any other error is returned as it is.
func (f *idempotencyFlag) maybeWritten(err error) error {
	if !errors.Is(err, cairn.ErrMaybeWritten) {
		return err
	}
	return fmt.Errorf("%w (%s)", err, f.hint())
}

// hint is the safe move maybeWritten adds. Without a key it names what
// the user gives one: "it" when that is what lands (a reply), else
// "each commit" (a commit lands a step).
func (f *idempotencyFlag) hint() string {
	if f.key != "" {
		return fmt.Sprintf("retry with the same --idempotency-key: if the %s landed, the retry prints it and writes no second one", f.lands)
	}
	whom := "each " + f.command
	if f.command == f.lands {
		whom = "it"
	}
	return fmt.Sprintf("to land a %s once, however often its answer is lost, give %s an --idempotency-key and its retries the same", f.lands, whom)
}
