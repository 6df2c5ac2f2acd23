package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cairnlog/cairn"
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
			Type string `json:"type"`
			Size int64  `json:"size"`
		}
		out := make([]entry, 0, len(files))
		for _, f := range files {
			out = append(out, entry{f.Path, modeName(f.Mode), f.Size})
		}
		return json.NewEncoder(e.stdout).Encode(out)
	}
	for _, f := range files {
		fmt.Fprintf(e.stdout, "%-7s %10d  %s\n", modeName(f.Mode), f.Size, printable(f.Path))
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

// printable returns text from a store (names, paths, questions, records)
// fit for a line of human output: what could move the cursor, drive the
// terminal or forge another line — C0 and C1 control characters, DEL,
// bidirectional overrides, line and paragraph separators, invalid UTF-8
// — is written as a Go-style escape (\n, \x1b, \u202e). Other text,
// any script, is kept as is. JSON output needs none of this: its
// encoder escapes control characters itself.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeRune reports whether r is one printable escapes.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true // C0, DEL, C1 (0x9b is a CSI to many terminals)
	case r == utf8.RuneError:
		return true // invalid UTF-8 (or U+FFFD itself, shown escaped)
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true // bidirectional marks and overrides
	case r == 0x2028, r == 0x2029:
		return true // line and paragraph separators
	}
	return false
}

// clip shortens s to at most n runes, marking the cut with "...", never
// cutting a rune or an escape in two.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := 0
	for i := range s {
		if cut == n-3 {
			out := s[:i]
			// An escape cut in two would read as other text: drop it.
			if j := strings.LastIndexByte(out, '\\'); j >= 0 && j >= len(out)-5 {
				out = out[:j]
			}
			return out + "..."
		}
		cut++
	}
	return s
}
