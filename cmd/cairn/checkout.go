package main

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"

	"github.com/cairnlog/cairn"
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
	// Written where the kernel takes the path (Step.Checkout resolves
	// it): LINK/../x is x beside the link's target, not the text cleaned.
	if err := st.Checkout(ctx, *dir); err != nil {
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
