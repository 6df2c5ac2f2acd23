package main

import (
	"context"
	"fmt"
)

const forkUsage = "SESSION[@N] NEW"

var forkCmd = command{
	summary:   "start session NEW from step SESSION@N (no data is copied)",
	usage:     forkUsage,
	run:       runFork,
	needStore: true,
}

func runFork(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "fork", forkUsage)
	pos, err := parse(fs, args, 2, 2)
	if err != nil {
		return err
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
	fmt.Fprintf(e.stdout, "%s (fork of %s)\n", st, from)
	return nil
}
