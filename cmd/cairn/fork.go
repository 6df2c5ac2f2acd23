package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cairnlog/cairn"
)

const forkUsage = "SESSION[@N] NEW [--json]"

var forkCmd = command{
	summary:   "start session NEW from step SESSION@N (no data is copied)",
	usage:     forkUsage,
	run:       runFork,
	needStore: true,
}

func runFork(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "fork", forkUsage)
	asJSON := fs.Bool("json", false, "print the new session's step as JSON: session, step, id, origin")
	pos, err := parse(fs, args, 2, 2)
	if err != nil {
		return err
	}
	// The summary reads "start session NEW from step SESSION@N", so the
	// two are easily given the other way round: say so, not that a step
	// reference is a bad session name.
	if strings.Contains(pos[1], "@") && !strings.Contains(pos[0], "@") && cairn.ValidSession(pos[0]) == nil {
		return usageError{fmt.Sprintf("%q is a step, and the new session's name comes second: want fork %s (did you mean cairn fork %s %s?)",
			pos[1], forkUsage, pos[1], pos[0])}
	}
	ws, err := e.openNamed(ctx, pos[1])
	if err != nil {
		return err
	}
	defer ws.Close()
	from, err := resolve(ctx, ws, pos[0])
	if err != nil {
		return err
	}
	st, err := ws.Fork(ctx, from, pos[1])
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(forkResult{
			Session: st.Session, Step: st.Number, ID: st.ID.String(), Origin: from.String(),
		})
	}
	fmt.Fprintf(e.stdout, "%s (fork of %s)\n", st, from)
	return nil
}

// forkResult is what fork --json prints: the new session's first step,
// named as commit --json and log --json name a step, and the step it
// copies (log --json's origin).
type forkResult struct {
	Session string `json:"session"`
	Step    uint64 `json:"step"`
	ID      string `json:"id"`
	Origin  string `json:"origin"`
}
