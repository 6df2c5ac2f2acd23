package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cairnlog/cairn"
)

const sessionsUsage = "[--json]"

var sessionsCmd = command{
	summary:   "list the sessions with their heads",
	usage:     sessionsUsage,
	run:       runSessions,
	needStore: true,
}

func runSessions(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "sessions", sessionsUsage)
	asJSON := fs.Bool("json", false, "one JSON object per line")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	ws, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer ws.Close()
	enc := json.NewEncoder(e.stdout)
	listed := 0
	var damaged []error
	// One session at a time, keeping none: a store's sessions are not
	// collected, nor their heads held in the workspace.
	err = ws.EachSession(ctx, func(name string) error {
		head, err := ws.ReadHead(ctx, name)
		if errors.Is(err, cairn.ErrNotFound) {
			return nil // marked but never committed, or removed
		}
		if err != nil && ctx.Err() == nil && errors.Is(err, cairn.ErrCorrupt) {
			// One damaged session does not hide the others (as inbox).
			damaged = append(damaged, err)
			return nil
		}
		if err != nil {
			return err
		}
		listed++
		if *asJSON {
			// "step" is the head's number, as in log and inbox.
			return enc.Encode(sessionLine{
				Session: name, Step: head.Number, ID: head.ID.String(),
				Status: head.Status.String(), Time: head.Time.Format(time.RFC3339Nano),
			})
		}
		_, err = fmt.Fprintf(e.stdout, "%-30s %6d  %-14s  %s\n", name, head.Number, head.Status, head.Time.Local().Format("2006-01-02 15:04:05"))
		return err
	})
	if err != nil {
		return err
	}
	if listed == 0 && len(damaged) == 0 && !*asJSON {
		fmt.Fprintln(e.stdout, "no sessions")
	}
	if len(damaged) > 0 {
		what := fmt.Sprintf("%d sessions", len(damaged))
		if len(damaged) == 1 {
			what = "1 session"
		}
		return fmt.Errorf("%s could not be read: %w", what, errors.Join(damaged...))
	}
	return nil
}

// sessionLine is one line of sessions --json: a session and its head step.
type sessionLine struct {
	Session string `json:"session"`
	Step    uint64 `json:"step"`
	ID      string `json:"id"`
	Status  string `json:"status"`
	Time    string `json:"time"`
}
