package main

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/targetdir"
)

const checkoutUsage = "SESSION[@N] --dir DIR"

var checkoutCmd = command{
	summary:   "write a step's state into a directory (JSON as DIR/state.json)",
	usage:     checkoutUsage,
	run:       runCheckout,
	needStore: true,
}

func runCheckout(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "checkout", checkoutUsage)
	dir := fs.String("dir", "", "the target `DIR` (absent or empty)")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if *dir == "" {
		return usagef("--dir is required")
	}
	if err := checkOutputDir("--dir", *dir); err != nil {
		return err
	}
	if err := e.checkOutsideStore("--dir", *dir); err != nil {
		return err
	}
	ws, steps, err := e.openSteps(ctx, pos[0])
	if err != nil {
		return err
	}
	defer ws.Close()
	st := steps[0]
	// Two checkouts into one new or empty directory at once would both
	// find it empty and fill it with their two states mixed, each saying
	// it succeeded. The directory is made and locked first, as cairn run
	// locks its work directory, and found empty under the lock; a
	// directory this checkout made is removed again if it fails.
	unmake, err := targetdir.Make(*dir)
	if err != nil {
		return usagef("--dir %s: cannot write it: %v", *dir, pathProblem(err))
	}
	unlock, err := targetdir.Lock(*dir)
	switch {
	case errors.Is(err, targetdir.ErrLocked):
		// Not unmade: the directory is the other command's to fill.
		return usagef("--dir %s is in use: another command (a checkout, a cairn run) is writing into it; give another directory", *dir)
	case err != nil:
		unlock = func() {} // a filesystem that cannot lock: unguarded, as before
	}
	defer unlock()
	if err := checkOutputDir("--dir", *dir); err != nil {
		return err
	}
	// Written where the kernel takes the path (Step.Checkout resolves
	// it): LINK/../x is x beside the link's target, not the text cleaned.
	if err := st.Checkout(targetdir.Held(ctx, *dir), *dir); err != nil {
		unmake()
		if errors.Is(err, iofs.ErrPermission) && !errors.Is(err, cairn.ErrRefused) {
			// Not the store's refusal but the target's, as export
			// says of an --out it may not write: bad input.
			return usagef("--dir %s: cannot write it: %v", *dir, pathProblem(err))
		}
		return err
	}
	fmt.Fprintf(e.stdout, "%s -> %s\n", st, *dir)
	return nil
}
