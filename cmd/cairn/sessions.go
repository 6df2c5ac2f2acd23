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
	summary: "list the sessions with their heads",
	usage:   sessionsUsage,
	run:     runSessions,
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
	names, err := ws.SessionNames(ctx)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(e.stdout)
	for _, name := range names {
		s, err := ws.Session(name)
		if err != nil {
			continue
		}
		head, err := s.Head(ctx)
		if errors.Is(err, cairn.ErrNotFound) {
			continue // marked but never committed
		}
		if err != nil {
			return err
		}
		if *asJSON {
			if err := enc.Encode(map[string]any{
				"session": name, "head": head.Number, "id": head.ID.String(),
				"status": head.Status.String(), "time": head.Time.Format(time.RFC3339Nano),
			}); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(e.stdout, "%-30s %6d  %-14s %s\n", name, head.Number, head.Status, head.Time.Local().Format("2006-01-02 15:04:05"))
	}
	return nil
}
