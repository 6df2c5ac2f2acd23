package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cairnlog/cairn"
)

const gcUsage = "[--grace DURATION] [--dry-run] [--json] [--verbose]"

var gcCmd = command{
	summary:   "delete data no live step uses (two runs, after a grace period)",
	usage:     gcUsage,
	run:       runGC,
	needStore: true,
}

func runGC(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "gc", gcUsage)
	grace := fs.Duration("grace", cairn.DefaultGrace, "delete only what was unreachable and written at least `DURATION` ago")
	dry := fs.Bool("dry-run", false, "report what would be deleted; change nothing")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	verbose := fs.Bool("verbose", false, "list the deleted objects")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *grace < 0 {
		return usagef("--grace must not be negative")
	}
	ws, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer ws.Close()
	// The default store before its first commit is simply empty, and a
	// store is made by its first commit: gc, which writes its state and
	// clock, only looks there (a dry run writes nothing).
	fresh := e.defaultStoreUnmade()
	rep, err := ws.GC(ctx, cairn.GCOptions{Grace: *grace, DryRun: *dry || fresh})
	if err != nil {
		return err
	}
	rep.DryRun = *dry
	if *asJSON {
		// Lists are arrays even when empty, so that a script can
		// iterate them whatever the run found.
		deletedKeys, tombstoneKeys := rep.DeletedKeys, rep.TombstoneKeys
		if deletedKeys == nil {
			deletedKeys = []string{}
		}
		if tombstoneKeys == nil {
			tombstoneKeys = []string{}
		}
		return json.NewEncoder(e.stdout).Encode(map[string]any{
			"objects": rep.Objects, "bytes": rep.Bytes, "live_steps": rep.LiveSteps,
			"live_objects": rep.LiveObjects, "live_bytes": rep.LiveBytes,
			"candidates": rep.Candidates, "candidate_bytes": rep.CandidateBytes, "young_steps": rep.YoungSteps,
			"deleted": rep.Deleted, "deleted_bytes": rep.DeletedBytes, "deleted_keys": deletedKeys,
			"tombstone_keys": tombstoneKeys,
			"tombstones":     rep.Tombstones, "dry_run": rep.DryRun, "seconds": rep.Duration.Seconds(), "note": rep.Note,
		})
	}
	if rep.Note != "" {
		fmt.Fprintln(e.stderr, "cairn gc: note:", rep.Note)
	}
	if *verbose {
		deleted, fenced := "deleted", "fenced with a tombstone"
		if rep.DryRun {
			deleted, fenced = "would delete", "would fence with a tombstone"
		}
		for _, k := range rep.DeletedKeys {
			fmt.Fprintf(e.stdout, "%s %s\n", deleted, k)
		}
		// The slot above a removed session's last step (or an expired
		// fork's slot) takes a small tombstone: docs/maintenance.md.
		for _, k := range rep.TombstoneKeys {
			fmt.Fprintf(e.stdout, "%s %s\n", fenced, k)
		}
	}
	verb := "deleted"
	if rep.DryRun {
		verb = "would delete"
	}
	tombs := ""
	if rep.Tombstones > 0 {
		verb := "fenced"
		if rep.DryRun {
			verb = "would fence"
		}
		tombs = fmt.Sprintf("; %s %s with a tombstone", verb, plural(rep.Tombstones, "slot"))
	}
	young := ""
	if rep.YoungSteps > 0 {
		young = fmt.Sprintf(" (%s younger than %v, kept until then so that a paused writer cannot fill their slots again)",
			plural(rep.YoungSteps, "step"), minutes(cairn.SlotFenceAge))
	}
	fmt.Fprintf(e.stdout, "%s (%s), %s; live %s (%s); %s %s (%s)%s; %s (%s) wait for a later run%s; %s\n",
		plural(rep.Objects, "object"), humanBytes(rep.Bytes), plural(rep.LiveSteps, "live step"),
		plural(rep.LiveObjects, "object"), humanBytes(rep.LiveBytes),
		verb, plural(rep.Deleted, "object"), humanBytes(rep.DeletedBytes), tombs,
		plural(rep.Candidates, "candidate"), humanBytes(rep.CandidateBytes), young,
		rep.Duration.Round(time.Millisecond))
	return nil
}

// plural says "1 step", "2 steps": n and the noun, whose last word
// takes an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// humanBytes formats n bytes with a binary unit.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// minutes says d in whole minutes ("30 minutes").
func minutes(d time.Duration) string { return plural(int(d.Minutes()), "minute") }
