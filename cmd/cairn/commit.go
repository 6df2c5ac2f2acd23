package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/jsontext"
	"github.com/cairnlog/cairn/internal/runner"
	"github.com/cairnlog/cairn/manifest/tree"
)

const commitUsage = "SESSION (--json-file F | --dir D | --patch F | -) [--record JSON | --record-file F] [--status S] [--expect N] [--withdraw] [--idempotency-key K] [--json]"

var commitCmd = command{
	summary: "commit a step: a JSON document, a JSON Patch of the head's document, or a directory",
	usage:   commitUsage,
	run:     runCommit,
}

func runCommit(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "commit", commitUsage)
	jsonFile := fs.String("json-file", "", "commit the JSON document in `FILE`")
	dir := fs.String("dir", "", "commit the directory tree `DIR`")
	patch := fs.String("patch", "", "commit the head's JSON document changed by the RFC 6902 JSON Patch in `FILE` (- for stdin)")
	record := fs.String("record", "", "the step record, a `JSON` value saying what happened this step")
	recordFile := fs.String("record-file", "", "read the step record from `FILE` (- for stdin), for records too long for an argument (up to 8 MiB)")
	status := fs.String("status", "running", "loop status `S` after the step: running, awaiting_input or done")
	expect := fs.whole("expect", 0, 0, "fail with exit 3 unless the head is step `N` (0: the session must not exist)")
	withdraw := fs.Bool("withdraw", false, "withdraw the unanswered question of a head that awaits input (without it such a commit fails with exit 3; with it, a commit on a head that asks nothing fails with exit 3)")
	key := newIdempotencyFlag(fs, "step")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	pos, err := parse(fs, args, 1, 2)
	if err != nil {
		return err
	}
	// A bad name is said before any input is read.
	if err := cairn.ValidSession(pos[0]); err != nil {
		return usageError{err.Error()}
	}
	stdin := len(pos) == 2 && pos[1] == "-"
	if len(pos) == 2 && !stdin {
		return usagef("unexpected argument %q%s", pos[1], stateHint(pos[1], *asJSON))
	}
	sources := 0
	for _, b := range []bool{*jsonFile != "", *dir != "", *patch != "", stdin} {
		if b {
			sources++
		}
	}
	if sources != 1 {
		return usagef("give exactly one of --json-file F, --dir D, --patch F or - (JSON on stdin)")
	}
	st, err := parseStatusFlag(*status)
	if err != nil {
		return err
	}
	opts := cairn.CommitOptions{Status: st, Withdraw: *withdraw, IdempotencyKey: key.key}
	if err := key.check(); err != nil {
		return err
	}
	// Given empty, each is still given (--record "$R" with R unset): no
	// JSON, no file, not "no record".
	if given(fs, "record-file") {
		switch {
		case given(fs, "record"):
			return usagef("give --record or --record-file, not both")
		case *recordFile == "":
			return usagef("--record-file \"\": give a file name (- for stdin)")
		case *recordFile == "-" && (stdin || *patch == "-" || *jsonFile == "-"):
			return usagef("--record-file - and the state cannot both come from stdin")
		}
		if opts.Record, err = readRecordFile(ctx, e, *recordFile); err != nil {
			return err
		}
	} else if given(fs, "record") {
		if len(*record) > cairn.MaxRecordBytes {
			return usagef("--record: more than %d bytes, the most a step record may hold", cairn.MaxRecordBytes)
		}
		if err := checkJSONText("--record", []byte(*record), tree.MaxDepth); err != nil {
			return err
		}
		opts.Record = json.RawMessage(*record)
	}
	if opts.Record != nil {
		if _, err := cairn.ParseRecord(opts.Record); err != nil && !errors.Is(err, cairn.ErrNotConventional) {
			// It uses the convention's keys wrongly. Still committed;
			// exports carry it as raw JSON.
			fmt.Fprintf(e.stderr, "cairn commit: note: the record does not follow the step-record convention (docs/records.md), so exports carry it as raw JSON: %v\n", err)
		}
	}
	if given(fs, "expect") {
		opts.Expect = cairn.ExpectHead(*expect)
	}
	// What is read is bounded as what is read back will be.
	limits, err := cairn.LimitsFromEnv()
	if err != nil {
		return usageError{err.Error()}
	}
	maxValue := inputLimit{limits.MaxValueBytes, "the limit of one value: raise $" + cairn.EnvMaxValueBytes + " to commit more", true}
	var state cairn.State
	input := "" // the input a JSON document was read from
	switch {
	case *dir != "":
		if err := checkInputDir("--dir", *dir); err != nil {
			return err
		}
		if err := e.checkDirOutsideStore("--dir", *dir); err != nil {
			return err
		}
		// Taken as the kernel takes it (link/.. is the link's target's
		// parent) by the library, which reads it and keys its stat cache
		// by the directory it resolves to, and by the run record's
		// lookup (runner.BeginCommit): the path is passed as given.
		state = cairn.Dir(*dir)
		if c := cairn.DefaultCacheDir(); c != "" {
			state = cairn.DirWithCache(*dir, c)
		}
	case *patch != "":
		ops, err := readInput(ctx, e, "--patch", *patch, maxValue)
		if err != nil {
			return err
		}
		state = cairn.Patch(ops)
	case *jsonFile != "":
		if state, err = readJSONState(ctx, e, "--json-file", *jsonFile, maxValue); err != nil {
			return err
		}
		input = inputName("--json-file", *jsonFile)
	default:
		if state, err = readJSONState(ctx, e, "", "-", maxValue); err != nil {
			return err
		}
		input = inputName("", "-")
	}
	ws, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer ws.Close()
	// A fresh process starts from the head this machine last committed.
	ws.UseHeadCache(cairn.DefaultCacheDir())
	s, err := ws.Session(pos[0])
	if err != nil {
		return usageError{err.Error()}
	}
	// A state committed from cairn run's work directory: the run record
	// learns first that this process is committing it, so that a run
	// interrupted before NoteCommit below knows the step for its own.
	from := cmp.Or(*dir, *jsonFile)
	if from == "-" {
		from = ""
	}
	if from != "" {
		runner.BeginCommit(cairn.DefaultCacheDir(), ws.URL(), from, pos[0])
	}
	before := ws.Requests()
	step, err := s.Commit(ctx, state, opts)
	if err != nil && input != "" {
		err = stateError(err, input)
	}
	if err != nil {
		return key.maybeWritten(err)
	}
	landed()
	// The run record learns that the directory's state is stored.
	if from != "" {
		runner.NoteCommit(cairn.DefaultCacheDir(), ws.URL(), from, step)
	}
	used := ws.Requests().Sub(before)
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(commitResult{
			Session: step.Session, Step: step.Number, ID: step.ID.String(),
			Requests:     requestCounts{Put: used.Put, Get: used.Get, List: used.List, Head: used.Head},
			BytesWritten: used.BytesWritten, Replayed: step.Replayed,
		})
	}
	if step.Replayed {
		fmt.Fprintf(e.stdout, "%s %s (already written by an earlier try of this commit)\n", step, step.ID.Short())
		return nil
	}
	fmt.Fprintf(e.stdout, "%s %s\n", step, step.ID.Short())
	return nil
}

// landed runs once a commit's (or a reply's) step has landed, before the run record
// hears of it: tests kill the process there.
var landed = func() {}

// readJSONState reads a whole JSON document to commit. It is not checked
// here: the commit parses it and checks it is UTF-8 (see stateError).
func readJSONState(ctx context.Context, e *env, flag, path string, limit inputLimit) (cairn.State, error) {
	doc, err := readInput(ctx, e, flag, path, limit)
	if err != nil {
		return nil, err
	}
	return cairn.JSON(doc), nil
}

// stateError says a commit's refusal of the JSON document read from the
// input name (not JSON, not UTF-8, nested too deep) as that input's:
// "--json-file F: invalid JSON: offset 6: not UTF-8 (byte 0xff), as JSON
// must be". Other errors are returned as they are.
func stateError(err error, name string) error {
	if !errors.Is(err, cairn.ErrInvalid) || !errors.Is(err, tree.ErrSyntax) && !errors.Is(err, tree.ErrTooDeep) {
		return err
	}
	msg := err.Error()
	for _, cause := range []error{tree.ErrSyntax, tree.ErrTooDeep} {
		if i := strings.Index(msg, cause.Error()); i >= 0 {
			return usageError{name + ": " + msg[i:]}
		}
	}
	return usageError{name + ": " + msg}
}

// readRecordFile reads the step record --record-file names (- for
// stdin), reading no more than a record may hold. The JSON value is
// stored without the whitespace around it (a file's last newline).
func readRecordFile(ctx context.Context, e *env, path string) (json.RawMessage, error) {
	b, err := readInput(ctx, e, "--record-file", path, inputLimit{cairn.MaxRecordBytes, "the most a step record may hold", true})
	if err != nil {
		return nil, err
	}
	name := inputName("--record-file", path)
	if b = bytes.TrimSpace(b); len(b) == 0 {
		return nil, usagef("%s is empty: want a JSON value", name)
	}
	if err := checkJSONText(name, b, tree.MaxDepth); err != nil {
		return nil, err
	}
	return b, nil
}

// checkJSONText refuses a value the flag what gives unless it is JSON
// and UTF-8 (which encoding/json does not check inside strings), nested
// no more than depth levels: a record holds no more than a state does
// (tree.MaxDepth), and a reply one level less (hitl.MaxInputDepth). Said
// of the flag, not of the state the commit also reads.
func checkJSONText(what string, b []byte, depth int) error {
	switch {
	case !json.Valid(b):
		return usagef("%s is not valid JSON: %s", what, jsontext.Problem(b))
	case !utf8.Valid(b):
		return usagef("%s is not UTF-8, as JSON must be", what)
	}
	if at := jsontext.Deeper(b, depth); at >= 0 {
		return usagef("%s is nested too deep: more than %d levels at offset %d, the most it may hold", what, depth, at)
	}
	return nil
}

type requestCounts struct {
	Put  int64 `json:"put"`
	Get  int64 `json:"get"`
	List int64 `json:"list"`
	Head int64 `json:"head"`
}

type commitResult struct {
	Session      string        `json:"session"`
	Step         uint64        `json:"step"`
	ID           string        `json:"id"`
	Requests     requestCounts `json:"requests"`
	BytesWritten int64         `json:"bytes_written"`
	// Replayed: the step was written by an earlier try of this commit
	// (--idempotency-key), and this one wrote nothing.
	Replayed bool `json:"replayed,omitempty"`
}

// stateHint suggests the flag a stray argument of commit was likely meant
// for: a directory is committed with --dir, a file with --json-file (or
// --patch); --json only says how the result is printed.
func stateHint(arg string, asJSON bool) string {
	fi, err := os.Stat(arg)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Sprintf(": to commit the directory, give --dir %s", arg)
	case err == nil:
		hint := fmt.Sprintf(": to commit the JSON document in the file, give --json-file %s (or --patch %s for a JSON Patch)", arg, arg)
		if asJSON {
			hint += "; --json prints the result as JSON"
		}
		return hint
	}
	return ""
}

// parseStatusFlag parses the value of a --status flag (commit, export),
// saying a bad one in the flag's words.
func parseStatusFlag(v string) (cairn.Status, error) {
	st, err := cairn.ParseStatus(v)
	if err != nil {
		return 0, usagef("--status %q: want running, awaiting_input or done", v)
	}
	return st, nil
}
