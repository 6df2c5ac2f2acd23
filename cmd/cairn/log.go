package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/termtext"
)

const logUsage = "SESSION[@N] [--json]"

var logCmd = command{
	summary:   "list a session's steps, newest first, across forks",
	usage:     logUsage,
	run:       runLog,
	needStore: true,
}

type logLine struct {
	Session string          `json:"session"`
	Step    uint64          `json:"step"`
	ID      string          `json:"id"`
	Parent  *string         `json:"parent"`
	Origin  *string         `json:"origin,omitempty"`
	Time    string          `json:"time"`
	Status  string          `json:"status"`
	Kind    string          `json:"kind"`
	Bytes   int64           `json:"stored_bytes"`
	Record  json.RawMessage `json:"record,omitempty"`
	// Truncated marks the oldest step left after a prune.
	Truncated bool `json:"truncated,omitempty"`
}

// newLogLine is step s as a line of `cairn log --json`.
func newLogLine(s *cairn.Step) logLine {
	return logLine{
		Session: s.Session, Step: s.Number, ID: s.ID.String(), Parent: refString(s.Parent),
		Origin: refString(s.Origin), Time: s.Time.Format(time.RFC3339Nano), Status: s.Status.String(),
		Kind: s.Kind.String(), Bytes: s.StoredBytes, Record: s.Record, Truncated: s.Truncated,
	}
}

func refString(r *cairn.StepRef) *string {
	if r == nil {
		return nil
	}
	s := fmt.Sprintf("%s@%d", r.Session, r.Number)
	return &s
}

func runLog(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "log", logUsage)
	asJSON := fs.Bool("json", false, "one JSON object per line")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	ws, steps, err := e.openSteps(ctx, pos[0])
	if err != nil {
		return err
	}
	defer ws.Close()
	// A log reads each step once: a small cache keeps its memory flat
	// however long the history (with the default one, a log of 100,000
	// steps kept them all and peaked at 400 MB).
	ws.SetCacheLimit(walkCacheBytes)
	st := steps[0]
	enc := json.NewEncoder(e.stdout)
	// Fixed-width columns first; the step column is as wide as the
	// newest step's, so a session's lines align whatever their status.
	refWidth := len(st.String())
	return st.Log(ctx, func(s *cairn.Step) error {
		if *asJSON {
			return enc.Encode(newLogLine(s))
		}
		line := fmt.Sprintf("%s  %s  %-14s  %-*s  %s", s.ID.Short(), s.Time.Local().Format("2006-01-02 15:04:05"),
			termtext.Printable(s.Status.String()), refWidth, termtext.Printable(s.String()), termtext.Clip(termtext.Printable(string(s.Record)), 60))
		if s.Origin != nil {
			line += "  (fork of " + termtext.Printable(*refString(s.Origin)) + ")"
		}
		if s.Truncated {
			line += "  (older history pruned)"
		}
		_, err := fmt.Fprintln(e.stdout, strings.TrimRight(line, " "))
		return err
	})
}
