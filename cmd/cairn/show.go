package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/jsontext"
	"github.com/cairnlog/cairn/internal/termtext"
)

const showUsage = "SESSION[@N] [--record] [--json]"

var showCmd = command{
	summary:   "print a step's state (or --record: its record)",
	usage:     showUsage,
	run:       runShow,
	needStore: true,
}

func runShow(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "show", showUsage)
	record := fs.Bool("record", false, "print the step record instead of the state")
	asJSON := fs.Bool("json", false, "print a directory state's listing as JSON")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	ws, steps, err := e.openSteps(ctx, pos[0])
	if err != nil {
		return err
	}
	defer ws.Close()
	st := steps[0]
	if *record {
		rec := st.Record
		if rec == nil {
			rec = json.RawMessage("null")
		}
		_, err := fmt.Fprintf(e.stdout, "%s\n", rec)
		return err
	}
	if st.Kind == cairn.KindJSON {
		if err := st.WriteJSON(ctx, e.stdout); err != nil {
			return err
		}
		_, err := fmt.Fprintln(e.stdout)
		return err
	}
	files, err := st.Files(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		type entry struct {
			Path string `json:"path"`
			// PathBytes is a name that is not UTF-8, exactly.
			PathBytes []byte `json:"path_bytes,omitempty"`
			Type      string `json:"type"`
			Size      int64  `json:"size"`
		}
		out := make([]entry, 0, len(files))
		for _, f := range files {
			out = append(out, entry{f.Path, jsontext.NameBytes(f.Path), modeName(f.Mode), f.Size})
		}
		return json.NewEncoder(e.stdout).Encode(out)
	}
	for _, f := range files {
		fmt.Fprintf(e.stdout, "%-7s %10d  %s\n", modeName(f.Mode), f.Size, termtext.Printable(f.Path))
	}
	return nil
}

func modeName(m cairn.FileMode) string {
	switch m {
	case cairn.ModeExec:
		return "exec"
	case cairn.ModeSymlink:
		return "symlink"
	case cairn.ModeDir:
		return "dir"
	}
	return "file"
}

// resolve turns S or S@N into a step, with usage errors for bad names.
func resolve(ctx context.Context, ws *cairn.Workspace, ref string) (*cairn.Step, error) {
	st, err := ws.Resolve(ctx, ref)
	if err != nil {
		if _, verr := ws.Session(sessionOf(ref)); verr != nil {
			return nil, usageError{verr.Error()}
		}
		return nil, err
	}
	return st, nil
}

func sessionOf(ref string) string {
	for i := 0; i < len(ref); i++ {
		if ref[i] == '@' {
			return ref[:i]
		}
	}
	return ref
}
