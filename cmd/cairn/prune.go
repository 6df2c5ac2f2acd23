package main

import (
	"context"
	"fmt"
	"math"
)

const pruneUsage = "SESSION --keep-last N"

var pruneCmd = command{
	summary:   "drop all but the newest N steps of a session's history",
	usage:     pruneUsage,
	run:       runPrune,
	needStore: true,
}

func runPrune(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "prune", pruneUsage)
	keep := fs.wholeIn("keep-last", 0, 1, math.MaxUint64, "a whole number", "to drop every step: cairn rm", "keep the newest `N` steps (N >= 1)")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if *keep == 0 {
		return usagef("--keep-last N with N >= 1 is required (to drop every step: cairn rm)")
	}
	ws, err := e.openNamed(ctx, pos[0])
	if err != nil {
		return err
	}
	defer ws.Close()
	res, err := ws.Prune(ctx, pos[0], *keep)
	if err != nil {
		return err
	}
	if res.Steps == 0 {
		fmt.Fprintf(e.stdout, "%s: history already starts at step %d (head %d); nothing pruned\n", res.Session, res.NewBase, res.Head)
		return nil
	}
	fmt.Fprintf(e.stdout, "pruned %s: %s; history now %d..%d; run cairn gc to free their space\n", res.Session, plural(int(min(res.Steps, math.MaxInt32)), "step"), res.NewBase, res.Head)
	return nil
}
