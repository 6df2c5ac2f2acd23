package main

import (
	"context"
	"fmt"
	"math"
)

const rmUsage = "SESSION"

var rmCmd = command{
	summary:   "remove a session (gc frees what no fork still uses)",
	usage:     rmUsage,
	run:       runRm,
	needStore: true,
}

func runRm(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "rm", rmUsage)
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	ws, err := e.openNamed(ctx, pos[0])
	if err != nil {
		return err
	}
	defer ws.Close()
	res, err := ws.Remove(ctx, pos[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "removed %s: %s (head was %d); run cairn gc to free their space\n", res.Session, plural(int(min(res.Steps, math.MaxInt32)), "step"), res.Head)
	return nil
}
