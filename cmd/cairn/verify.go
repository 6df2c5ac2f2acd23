package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cairnlog/cairn"
)

const verifyUsage = "[SESSION...] [--json]"

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
	asJSON := fs.Bool("json", false, "print the report as one JSON object: sessions, steps, objects, blobs, problems")
	names, err := parse(fs, args, 0, 1<<20)
	if err != nil {
		return err
	}
	ws, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer ws.Close()
	// verify reads each object once and then the blobs each step
	// changed, mostly from the objects it read last: a small cache keeps
	// its memory flat however long the histories (with the default one,
	// verifying a 100,000-step session peaked at 675 MB).
	ws.SetCacheLimit(walkCacheBytes)
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
	for i, p := range rep.Problems {
		// Verify said how to raise the limit in a Go program's terms;
		// a command's user raises it through the environment.
		if h := cairn.LimitEnvHint(p.Err); h != "" {
			rep.Problems[i].Effect = cairn.LimitEffect(h)
		}
	}
	if *asJSON {
		out := verifyResult{Sessions: rep.Sessions, Steps: rep.Steps, Objects: rep.Objects, Blobs: rep.Blobs,
			Problems: make([]verifyProblem, 0, len(rep.Problems))}
		for _, p := range rep.Problems {
			out.Problems = append(out.Problems, verifyProblem{Session: p.Session, Step: p.Step, Problem: p.Words(),
				Effect: p.Effect, Object: p.Object, Error: p.Err.Error()})
		}
		if err := json.NewEncoder(e.stdout).Encode(out); err != nil {
			return err
		}
	} else {
		for _, p := range rep.Problems {
			fmt.Fprintf(e.stdout, "BAD %s\n", p)
		}
		fmt.Fprintf(e.stdout, "verified %s, %s, %s, %s: %s\n",
			plural(rep.Sessions, "session"), plural(rep.Steps, "step"), plural(rep.Objects, "object"),
			plural(rep.Blobs, "blob"), plural(len(rep.Problems), "problem"))
	}
	if len(rep.Problems) > 0 {
		return errProblems
	}
	return nil
}

// verifyResult is what verify --json prints: the counts of its text
// form and each problem, an empty list when there is none.
type verifyResult struct {
	Sessions int             `json:"sessions"`
	Steps    int             `json:"steps"`
	Objects  int             `json:"objects"`
	Blobs    int             `json:"blobs"`
	Problems []verifyProblem `json:"problems"`
}

// verifyProblem is one bad object, as a BAD line names it: the session
// and the step (empty when the problem is no step's: a session's
// marker, hint or base marker, a fork pin) whose reading met it, the BAD
// line's words less the object's key, what the damage means, the
// object's key (empty when unknown) and the error.
type verifyProblem struct {
	Session string `json:"session,omitempty"`
	Step    string `json:"step,omitempty"`
	Problem string `json:"problem"`
	Effect  string `json:"effect,omitempty"`
	Object  string `json:"object,omitempty"`
	Error   string `json:"error"`
}
