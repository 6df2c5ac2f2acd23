package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cairnlog/cairn"
)

const duUsage = "[SESSION...] [--json]"

var duCmd = command{
	summary:   "stored bytes per session: unique, shared, logical, dedup ratio",
	usage:     duUsage,
	run:       runDu,
	needStore: true,
}

func runDu(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "du", duUsage)
	asJSON := fs.Bool("json", false, "print one JSON object")
	names, err := parse(fs, args, 0, 1<<20)
	if err != nil {
		return err
	}
	ws, err := e.openNamed(ctx, names...)
	if err != nil {
		return err
	}
	defer ws.Close()
	ws.SetCacheLimit(walkCacheBytes)
	u, err := ws.Usage(ctx, names...)
	// A damaged session does not hide the others: they are printed,
	// then the error names it (exit 1).
	var damaged *cairn.UnreadableError
	if err != nil && !errors.As(err, &damaged) {
		return err
	}
	if *asJSON {
		// The sessions damage kept from being read are named in the
		// JSON as well as on stderr: an empty "sessions" must not read
		// as an empty workspace. Both lists are arrays, even empty.
		out := struct {
			*cairn.Usage
			Unreadable []duUnreadable `json:"unreadable"`
		}{Usage: u, Unreadable: []duUnreadable{}}
		if damaged != nil {
			for i, s := range damaged.Sessions {
				out.Unreadable = append(out.Unreadable, duUnreadable{Session: s, Error: damaged.Errs[i].Error()})
			}
		}
		if jerr := json.NewEncoder(e.stdout).Encode(out); jerr != nil {
			return jerr
		}
		return err
	}
	fmt.Fprintf(e.stdout, "%-30s %6s %7s %10s %10s %10s %10s %7s\n", "SESSION", "STEPS", "OBJECTS", "STORED", "UNIQUE", "SHARED", "LOGICAL", "DEDUP")
	for _, s := range u.Sessions {
		fmt.Fprintf(e.stdout, "%-30s %6d %7d %10s %10s %10s %10s %7s\n", s.Session, s.Steps, s.Objects,
			humanBytes(s.StoredBytes), humanBytes(s.UniqueBytes), humanBytes(s.SharedBytes), humanBytes(s.LogicalBytes), dedup(s.DedupRatio))
	}
	frees := "cairn gc frees it"
	if damaged != nil {
		frees = "cairn gc frees it once the damaged sessions are repaired or removed"
	}
	fmt.Fprintf(e.stdout, "total: %s, %s; live %s, %s; garbage %s, %s (%s); logical %s, dedup %s\n",
		plural(u.Objects, "object"), humanBytes(u.Bytes), plural(u.LiveObjects, "object"), humanBytes(u.LiveBytes),
		plural(u.GarbageObjects, "object"), humanBytes(u.GarbageBytes), frees, humanBytes(u.LogicalBytes), dedup(u.DedupRatio))
	return err
}

// dedup formats a dedup ratio (logical bytes / stored bytes). Below 1 the
// store holds more than the states' raw bytes: a few small steps, whose
// object framing outweighs their data. There is no dedup to speak of,
// and "-" says so rather than a misleading 0.1x.
func dedup(r float64) string {
	if r < 1 {
		return "-"
	}
	return fmt.Sprintf("%.1fx", r)
}

// duUnreadable is a session du --json passes over, and why.
type duUnreadable struct {
	Session string `json:"session"`
	Error   string `json:"error"`
}
