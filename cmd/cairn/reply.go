package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/hitl"
)

const replyUsage = "SESSION --input JSON [--expect N] [--idempotency-key K] [--json]"

var replyCmd = command{
	summary:   "answer a session that awaits input: the answer becomes its next step",
	usage:     replyUsage,
	run:       runReply,
	needStore: true,
}

func runReply(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "reply", replyUsage)
	input := fs.String("input", "", "the answer, a `JSON` value (- reads it from stdin)")
	expect := fs.wholeIn("expect", 0, 1, math.MaxUint64, "a step number", "", "fail with exit 3 unless the question is the one at step `N` (as cairn inbox shows it)")
	key := newIdempotencyFlag(fs, "reply")
	asJSON := fs.Bool("json", false, "print the answer's step as JSON: session, step, id, in_reply_to (and replayed: true for a retry already written)")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	in := []byte(*input)
	over := false // more than the limit, whitespace around the value aside
	if *input == "-" {
		// Read as a commit reads its stdin; its limit is said below. The
		// limit is the value's, as the HTTP API counts it and as it is
		// stored: the newline ending a file, or spaces after the value,
		// are read beyond it, up to replySpace.
		limit := inputLimit{max: math.MaxInt64 - 1, json: true}
		if in, err = readInput(ctx, &env{stdin: io.LimitReader(e.stdin, hitl.MaxInput+replySpace+1)}, "--input", "-", limit); err != nil {
			return err
		}
		over = len(in) > hitl.MaxInput+replySpace
	}
	if !over && len(bytes.TrimSpace(in)) > 0 {
		// Only what follows the value: an error's offsets stay the input's.
		in = bytes.TrimRight(in, " \t\r\n")
	}
	switch {
	case *input == "-" && len(bytes.TrimSpace(in)) == 0:
		return usagef("--input -: the reply read from stdin is empty; give a JSON value, such as {\"approved\":true}")
	case len(bytes.TrimSpace(in)) == 0 && *input != "":
		return usagef("--input is empty; give a JSON value, such as {\"approved\":true}")
	case len(in) == 0 && given(fs, "input"):
		// --input "$A" with A unset: an answer left empty, not one
		// forgotten.
		return usagef("--input \"\": the answer is empty; give a JSON value, such as {\"approved\":true}, or - to read it from stdin")
	case len(in) == 0:
		return usagef("--input is required")
	case over || len(in) > hitl.MaxInput:
		// Before the JSON check: a cut-off read is not valid JSON,
		// and the limit is what the user needs to hear.
		return usagef("--input is over the limit of %d bytes (512 KiB) for a reply", hitl.MaxInput)
	}
	if err := key.check(); err != nil {
		return err
	}
	// Valid JSON that is also UTF-8, as a commit's --record must be.
	if err := checkJSONText("--input", in, hitl.MaxInputDepth); err != nil {
		return err
	}
	ws, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer ws.Close()
	// The answer is this machine's newest step: keep the head cache
	// that `cairn commit` starts from up to date.
	ws.UseHeadCache(cairn.DefaultCacheDir())
	s, err := ws.Session(pos[0])
	if err != nil {
		return usageError{err.Error()}
	}
	var question *uint64
	if given(fs, "expect") {
		question = expect
	}
	st, err := hitl.ReplyWith(ctx, s, in, hitl.ReplyOptions{Question: question, IdempotencyKey: key.key})
	if err != nil {
		return key.maybeWritten(err)
	}
	landed()
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(replyResult{
			Session: st.Session, Step: st.Number, ID: st.ID.String(), InReplyTo: st.Number - 1, Replayed: st.Replayed,
		})
	}
	if st.Replayed {
		fmt.Fprintf(e.stdout, "%s %s (reply to %s@%d, already written by an earlier try of this reply)\n", st, st.ID.Short(), st.Session, st.Number-1)
		return nil
	}
	fmt.Fprintf(e.stdout, "%s %s (reply to %s@%d)\n", st, st.ID.Short(), st.Session, st.Number-1)
	return nil
}

// replySpace is how much whitespace after a reply read from stdin is
// read beyond the reply's limit (hitl.MaxInput) and dropped.
const replySpace = 64 << 10

// replyResult is what reply --json prints: the answer's step, named as
// commit --json and log --json name a step, and the question's step
// number, as the answer's record holds it.
type replyResult struct {
	Session   string `json:"session"`
	Step      uint64 `json:"step"`
	ID        string `json:"id"`
	InReplyTo uint64 `json:"in_reply_to"`
	// Replayed: the step was written by an earlier try of this reply
	// (--idempotency-key), and this one wrote nothing.
	Replayed bool `json:"replayed,omitempty"`
}
