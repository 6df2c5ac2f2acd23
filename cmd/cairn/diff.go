package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/jsontext"
	"github.com/cairnlog/cairn/internal/termtext"
)

const diffUsage = "A B [--json]"

var diffCmd = command{
	summary:   "list entries added, removed or changed between two steps",
	usage:     diffUsage,
	run:       runDiff,
	needStore: true,
}

func runDiff(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "diff", diffUsage)
	asJSON := fs.Bool("json", false, "print a JSON array of changes")
	pos, err := parse(fs, args, 2, 2)
	if err != nil {
		return err
	}
	ws, steps, err := e.openSteps(ctx, pos[0], pos[1])
	if err != nil {
		return err
	}
	defer ws.Close()
	a, b := steps[0], steps[1]
	if a.Kind != b.Kind {
		// Bad input, like any other pair that cannot be compared.
		return usagef("cannot compare %s, %s, with %s, %s", a, kindName(a.Kind), b, kindName(b.Kind))
	}
	changes, err := ws.Diff(ctx, a, b)
	if err != nil {
		return err
	}
	if *asJSON {
		out := changesJSON(changes)
		if out == nil {
			out = []changeJSON{}
		}
		return json.NewEncoder(e.stdout).Encode(out)
	}
	for _, c := range changes {
		p := termtext.Printable(c.Path)
		if p == "" {
			p = "(the whole document)"
		}
		fmt.Fprintf(e.stdout, "%-8s %s\n", c.Kind, p)
	}
	return nil
}

// changeJSON is a change as diff --json and replay --json write it.
type changeJSON struct {
	Path string `json:"path"`
	// PathBytes is the exact bytes of a file name that is not UTF-8
	// (path then has U+FFFD for them), else left out.
	PathBytes []byte           `json:"path_bytes,omitempty"`
	Kind      cairn.ChangeKind `json:"kind"`
}

// changesJSON returns cs as written in JSON (nil for nil).
func changesJSON(cs []cairn.Change) []changeJSON {
	if cs == nil {
		return nil
	}
	out := make([]changeJSON, 0, len(cs))
	for _, c := range cs {
		out = append(out, changeJSON{c.Path, jsontext.NameBytes(c.Path), c.Kind})
	}
	return out
}

// kindName says what kind of state a step holds, in the user's words.
func kindName(k cairn.Kind) string {
	if k == cairn.KindJSON {
		return "a JSON state"
	}
	return "a directory state"
}
