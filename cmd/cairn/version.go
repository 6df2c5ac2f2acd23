package main

import (
	"context"
	"fmt"
	"io"

	"github.com/cairnlog/cairn/internal/version"
)

const versionUsage = ""

var versionCmd = command{
	summary: "print cairn's version (also cairn --version)",
	usage:   versionUsage,
	run:     runVersion,
	noStore: true,
}

func runVersion(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "version", versionUsage)
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	printVersion(e.stdout)
	return nil
}

func printVersion(w io.Writer) {
	fmt.Fprintf(w, "cairn %s (%s)\n", version.String(), version.Go())
}
