package main

import (
	"context"
	"errors"
	"fmt"
)

const verifyUsage = "[SESSION...]"

var verifyCmd = command{
	summary:   "re-hash everything reachable; exit 1 naming each bad object",
	usage:     verifyUsage,
	run:       runVerify,
	needStore: true,
}

// errProblems makes verify exit 1 after it printed its findings.
var errProblems = errors.New("verify found problems")

func runVerify(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "verify", verifyUsage)
	names, err := parse(fs, args, 0, 1<<20)
	if err != nil {
		return err
	}
	ws, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer ws.Close()
	seen := make(map[string]bool, len(names))
	unique := names[:0]
	for _, n := range names {
		if _, err := ws.Session(n); err != nil {
			return usageError{err.Error()}
		}
		if !seen[n] { // a session named twice is verified once
			seen[n] = true
			unique = append(unique, n)
		}
	}
	names = unique
	rep, err := ws.Verify(ctx, names...)
	if err != nil {
		return err
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(e.stdout, "BAD %s\n", p)
	}
	fmt.Fprintf(e.stdout, "verified %s, %s, %s, %s: %s\n",
		plural(rep.Sessions, "session"), plural(rep.Steps, "step"), plural(rep.Objects, "object"),
		plural(rep.Blobs, "blob"), plural(len(rep.Problems), "problem"))
	if len(rep.Problems) > 0 {
		return errProblems
	}
	return nil
}
