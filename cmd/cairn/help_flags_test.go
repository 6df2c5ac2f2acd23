package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// storeArgs are, for each command, arguments it accepts that make it
// open its store, and the stdin it reads: with --store naming a file,
// a command that uses the store must refuse it.
var storeArgs = map[string]struct {
	args  []string
	stdin string
}{
	"commit":   {[]string{"s", "-"}, "{}"},
	"show":     {[]string{"s"}, ""},
	"checkout": {[]string{"s", "--dir", "DIR"}, ""},
	"log":      {[]string{"s"}, ""},
	"fork":     {[]string{"s@1", "t"}, ""},
	"sessions": {nil, ""},
	"diff":     {[]string{"a", "b"}, ""},
	"replay":   {[]string{"s"}, ""},
	"verify":   {nil, ""},
	"run":      {[]string{"--session", "s", "--", "true"}, ""},
	"serve":    {[]string{"--listen", "127.0.0.1:0"}, ""},
	"inbox":    {nil, ""},
	"reply":    {[]string{"s", "--input", `"ok"`}, ""},
	"mcp":      {nil, ""},
	"export":   {[]string{"--format", "openai-jsonl"}, ""},
	"rm":       {[]string{"s"}, ""},
	"prune":    {[]string{"s", "--keep-last", "1"}, ""},
	"gc":       {nil, ""},
	"du":       {nil, ""},
}

// TestHelpListsOnlyUsedFlags: a command's --help lists only flags the
// command uses. --store is the flag every command got whether or not it
// opens a store (cairn version --help listed it): a command that lists
// it must use it (a --store naming a file is refused), and one that does
// not (version) refuses it after the command as the unknown flag it is.
func TestHelpListsOnlyUsedFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	flagLine := regexp.MustCompile(`(?m)^  --([a-z-]+)`)
	for name := range commands {
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{name, "--help"}, strings.NewReader(""), &out, &errb); code != 0 {
			t.Errorf("cairn %s --help: exit %d: %s", name, code, errb.String())
			continue
		}
		listsStore := false
		for _, m := range flagLine.FindAllStringSubmatch(out.String(), -1) {
			if m[1] == "store" {
				listsStore = true
			}
		}
		c, known := storeArgs[name]
		if listsStore != known {
			t.Errorf("cairn %s --help lists --store: %v; the test says it uses a store: %v (add new commands to storeArgs)", name, listsStore, known)
			continue
		}
		out.Reset()
		errb.Reset()
		args := []string{name, "--store", file}
		for _, a := range c.args {
			if a == "DIR" {
				a = t.TempDir()
			}
			args = append(args, a)
		}
		code := run(context.Background(), args, strings.NewReader(c.stdin), &out, &errb)
		switch {
		case listsStore && (code != 2 || !strings.Contains(errb.String(), "not a directory")):
			t.Errorf("cairn %s: exit %d, stderr %q; want --store naming a file refused (exit 2, not a directory): the command lists --store but ignores it", strings.Join(args, " "), code, errb.String())
		case !listsStore && (code != 2 || !strings.Contains(errb.String(), "--store")):
			t.Errorf("cairn %s: exit %d, stderr %q; want --store refused (exit 2) by a command that uses no store", strings.Join(args, " "), code, errb.String())
		}
	}
}
