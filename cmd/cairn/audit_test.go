package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
)

// Regression tests of the hostile-user audit of the CLI's boundaries.

// fullWriter is a stdout on a full disk: every write fails with ENOSPC.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.ENOSPC}
}

// TestOutputLostIsAnError: a command whose output could not be written
// (a full disk, `cairn export > file` with no room) must not exit 0 as if
// the output were there. Only a reader that went away (EPIPE) is quiet.
func TestOutputLostIsAnError(t *testing.T) {
	store := t.TempDir()
	for _, doc := range []string{`{"n":1}`, `{"n":2}`} {
		if _, errs, code := cli(t, store, doc, "commit", "s", "-", "--record", `{"messages":[{"role":"user","content":"hi"}]}`); code != 0 {
			t.Fatal(errs)
		}
	}
	if _, errs, code := cli(t, store, `{"q":1}`, "commit", "w", "-", "--status", "awaiting_input", "--record", `{"question":"ok?"}`); code != 0 {
		t.Fatal(errs)
	}
	for _, args := range [][]string{
		{"log", "s"}, {"show", "s"}, {"sessions"}, {"diff", "s@1", "s"}, {"du"}, {"inbox"},
		{"export", "--format", "openai-jsonl"}, {"version"}, {"help"},
	} {
		var errb bytes.Buffer
		code := run(context.Background(), append([]string{"--store", store}, args...), strings.NewReader(""), fullWriter{}, &errb)
		errs := errb.String()
		if code != 1 || !strings.Contains(errs, "no space left on device") || !strings.HasSuffix(errs, "\n") {
			t.Errorf("cairn %s onto a full stdout: exit %d, stderr %q; want exit 1 and a message", strings.Join(args, " "), code, errs)
		}
	}
}

// TestExpectMinusOneRefused: --expect -1 is not a step number. It was
// taken for "no --expect" (the flag's hidden default), so the commit
// landed unfenced; it is a usage error like any other negative value.
func TestExpectMinusOneRefused(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"n":1}`, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	for _, v := range []string{"-1", "-2"} {
		out, errs, code := cli(t, store, `{"n":2}`, "commit", "s", "-", "--expect", v)
		if code != 2 || !strings.Contains(errs, "--expect") || out != "" {
			t.Errorf("commit --expect %s: exit %d, %q, %q; want exit 2 naming --expect", v, code, out, errs)
		}
	}
	if out, _, code := cli(t, store, "", "log", "s"); code != 0 || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Fatalf("log after refused commits: exit %d %q, want one step", code, out)
	}
}

// TestServeRefusesBadMaxBody: --max-body 0 or less is not a bound; it was
// silently replaced by the default and the server started.
func TestServeRefusesBadMaxBody(t *testing.T) {
	store := t.TempDir()
	for _, v := range []string{"0", "-5"} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // a server that starts anyway stops at once
		var out, errb bytes.Buffer
		code := run(ctx, []string{"--store", store, "serve", "--listen", "127.0.0.1:0", "--max-body", v}, strings.NewReader(""), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), "--max-body") || out.Len() != 0 {
			t.Errorf("serve --max-body %s: exit %d, stdout %q, stderr %q; want exit 2 naming --max-body", v, code, out.String(), errb.String())
		}
	}
}
