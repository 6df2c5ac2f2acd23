package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cairnlog/cairn/internal/hitl"
	"github.com/cairnlog/cairn/internal/termtext"
)

const inboxUsage = "[--json]"

var inboxCmd = command{
	summary:   "list the sessions waiting for a human (head status awaiting_input)",
	usage:     inboxUsage,
	run:       runInbox,
	needStore: true,
}

func runInbox(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "inbox", inboxUsage)
	asJSON := fs.Bool("json", false, "one JSON object per line: session, step, id, time, question, record")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	ws, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer ws.Close()
	// Listed even when some sessions cannot be read; their error
	// follows (exit 1).
	pending, ierr := hitl.Inbox(ctx, ws)
	if ierr != nil && len(pending) == 0 {
		return ierr
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	for _, p := range pending {
		if *asJSON {
			if err := enc.Encode(p); err != nil {
				return err
			}
			continue
		}
		q := questionWords(p.Question)
		if q == "" {
			q = "(no question)" // paused with no question in its record
		}
		if _, err := fmt.Fprintf(e.stdout, "%s@%d  %s  %s\n", termtext.Printable(p.Session), p.Step, p.Time.Local().Format("2006-01-02 15:04:05"), termtext.Clip(termtext.Printable(q), 100)); err != nil {
			return err
		}
	}
	if len(pending) == 0 && !*asJSON {
		fmt.Fprintln(e.stdout, "no session awaits input")
	}
	return ierr
}

// questionWords is a question to a human as inbox and replay show it: a
// JSON string as its text, any other value as its JSON; "" for none.
func questionWords(q json.RawMessage) string {
	var s string
	if json.Unmarshal(q, &s) == nil {
		return s
	}
	return string(q)
}
