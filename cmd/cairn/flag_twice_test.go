package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSingleValueFlagGivenTwice: a flag that takes one value, given
// twice, is exit 2 naming the flag, and nothing is written. The flag
// package kept the last use, so cairn --store A --store B commit wrote
// to B, and commit --expect 1 --expect 2 checked 2.
func TestSingleValueFlagGivenTwice(t *testing.T) {
	a, b, dir := t.TempDir(), t.TempDir(), t.TempDir()
	if _, errs, code := cli(t, a, `{}`, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--store", a, "--store", b, "commit", "s", "-"}, "cairn: --store given twice (it takes one value)"},
		{[]string{"--store=" + a, "-store=" + b, "commit", "s", "-"}, "cairn: -store given twice (it takes one value)"},
		{[]string{"--store", a, "commit", "s", "-", "--store", b}, "cairn commit: --store given twice (it takes one value)"},
		{[]string{"commit", "--store", a, "s", "-", "--store=" + b}, "cairn commit: --store given twice (it takes one value)"},
		{[]string{"--store", a, "commit", "s", "-", "--expect", "1", "--expect", "2"}, "cairn commit: --expect given twice (it takes one value)"},
		{[]string{"--store", a, "commit", "s", "-", "--status", "done", "-status=running"}, "cairn commit: -status given twice (it takes one value)"},
		{[]string{"--store", a, "commit", "s", "-", "--json", "--json=false"}, "cairn commit: --json given twice, on and off"},
		{[]string{"--store", a, "sessions", "--store", b}, "cairn sessions: --store given twice (it takes one value)"},
		{[]string{"sessions", "--store", a, "--store", b}, "cairn sessions: --store given twice (it takes one value)"},
		{[]string{"--store", a, "log", "s", "--json", "--json=false"}, "cairn log: --json given twice, on and off"},
		{[]string{"--store", a, "prune", "s", "--keep-last", "5", "--keep-last", "1"}, "cairn prune: --keep-last given twice (it takes one value)"},
		{[]string{"--store", a, "export", "--format", "openai-jsonl", "--format", "atif"}, "cairn export: --format given twice (it takes one value)"},
		{[]string{"--store", a, "export", "--format", "openai-jsonl", "--out", filepath.Join(dir, "x"), "--out", filepath.Join(dir, "y")}, "cairn export: --out given twice (it takes one value)"},
		{[]string{"--store", a, "run", "--session", "s", "--session", "t", "--", "true"}, "cairn run: --session given twice (it takes one value)"},
		{[]string{"--store", a, "serve", "--listen", "127.0.0.1:0", "--listen", "127.0.0.1:0"}, "cairn serve: --listen given twice (it takes one value)"},
		{[]string{"--store", a, "checkout", "s", "--dir", filepath.Join(dir, "c"), "--dir", filepath.Join(dir, "d")}, "cairn checkout: --dir given twice (it takes one value)"},
	} {
		// On a flag it misreads, serve would serve: a deadline ends it.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var stderr bytes.Buffer
		code := run(ctx, c.args, strings.NewReader(`{"x":1}`), io.Discard, &stderr)
		cancel()
		if errs := stderr.String(); code != 2 || errs != c.want+"\n" {
			t.Errorf("cairn %q: exit %d, %q; want exit 2 saying %q", c.args, code, errs, c.want)
		}
	}
	// Nothing was written: a has its one step, b is empty.
	if out, errs, code := cli(t, a, "", "log", "s"); code != 0 || strings.Count(out, "\n") != 1 {
		t.Errorf("log s in A: exit %d, %q, %s", code, out, errs)
	}
	for _, d := range []string{b, dir} {
		if ents, err := os.ReadDir(d); err != nil || len(ents) != 0 {
			t.Errorf("%s: %d entries, %v; want none", d, len(ents), err)
		}
	}
	// An on/off flag given twice the same way is no mistake.
	if out, errs, code := cli(t, a, "", "log", "s", "--json", "--json"); code != 0 || !strings.Contains(out, `"step"`) {
		t.Errorf("log s --json --json: exit %d, %q, %s", code, out, errs)
	}
	// A repeatable flag still repeats.
	out, errs, code := cli(t, a, "", "export", "--format", "openai-jsonl", "--session", "s", "--session", "s*", "--label", "k=v", "--label", "k2=v2")
	if code != 0 {
		t.Errorf("export with --session and --label twice: exit %d, %q, %s", code, out, errs)
	}
	// One use of each is still fine, before or after the command.
	if _, errs, code := run2(t, "sessions", "--store", a); code != 0 {
		t.Errorf("sessions --store A: exit %d, %s", code, errs)
	}
}

// run2 runs cairn with args as given (no --store added).
func run2(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}
