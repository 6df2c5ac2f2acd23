package main

import (
	"context"
	"encoding/json"
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
	// One session at a time, keeping none: a store's sessions are not
	// collected, nor their heads held in the workspace. A damaged session
	// does not hide the others: its error comes after the list (exit 1).
	err = ws.EachHead(ctx, "", func(head *cairn.Step) error {
		listed++
		if *asJSON {
			// "step" is the head's number, as in log and inbox.
			return enc.Encode(sessionLine{
				Session: head.Session, Step: head.Number, ID: head.ID.String(),
				Status: head.Status.String(), Time: head.Time.Format(time.RFC3339Nano),
			})
		}
		_, err := fmt.Fprintf(e.stdout, "%-30s %6d  %-14s  %s\n", head.Session, head.Number, head.Status, head.Time.Local().Format("2006-01-02 15:04:05"))
		return err
	})
	if err == nil && listed == 0 && !*asJSON {
		fmt.Fprintln(e.stdout, "no sessions")
	}
	return err
}

// sessionLine is one line of sessions --json: a session and its head step.
type sessionLine struct {
	Session string `json:"session"`
	Step    uint64 `json:"step"`
	ID      string `json:"id"`
	Status  string `json:"status"`
	Time    string `json:"time"`
}
