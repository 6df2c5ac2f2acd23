package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
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
		if _, errs, code := cli(t, store, doc, "commit", "s", "-", "--record", `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`); code != 0 {
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

// TestMCPSurvivesMalformedLines: a line that is not a JSON-RPC message
// (not JSON, a bare number, no "jsonrpc":"2.0", an object id, a batch,
// one over the size bound) is answered with a JSON-RPC error in words,
// not Go type names, and the session goes on: it used to end `cairn mcp`
// (exit 1), dropping the answers of calls still running. A patch that
// does not apply is the tool's error alone, not a step that may have
// been written.
func TestMCPSurvivesMalformedLines(t *testing.T) {
	c, cmd, stderr := startMCP(t, filepath.Join(t.TempDir(), "store"))
	c.call("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "cairn-test", "version": "1"},
	})
	c.send(map[string]any{"method": "notifications/initialized"})
	c.tool("checkpoint", map[string]any{"session": "m", "state_json": `{"a":1}`})
	huge := `{"jsonrpc":"2.0","id":99,"method":"tools/list","params":{"x":"` + strings.Repeat("x", 17<<20) + `"}}`
	for _, line := range []string{
		"garbage", "5", "{}", `{"foo":1}`, "[]", `{"jsonrpc":"1.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, `[{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`, huge,
	} {
		if _, err := io.WriteString(c.in, line+"\n"); err != nil {
			t.Fatalf("write %.40q: %v (stderr %q)", line, err, stderr.String())
		}
		reply, err := c.out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("after %.40q: %v; stderr %q", line, err, stderr.String())
		}
		var resp struct {
			Error *struct {
				Code    int
				Message string
			}
		}
		if json.Unmarshal(reply, &resp) != nil || resp.Error == nil || resp.Error.Code > -32600 || resp.Error.Code < -32700 ||
			strings.Contains(resp.Error.Message, "Go value") || strings.Contains(resp.Error.Message, "interface {}") {
			t.Errorf("answer to %.40q: %.300s; want a JSON-RPC parse or invalid-request error in words", line, reply)
		}
	}
	var res struct {
		IsError bool
		Content []struct{ Text string }
	}
	json.Unmarshal(c.call("tools/call", map[string]any{"name": "checkpoint", "arguments": map[string]any{"session": "m", "patch": `[{"op":"remove","path":"/nope"}]`}}), &res)
	if !res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, "patch op 1") || strings.Contains(res.Content[0].Text, "may have been written") {
		t.Errorf("failed patch = %+v; want the failed operation and nothing else", res)
	}
	if got := c.tool("resume", map[string]any{"session": "m"}); got["state_json"] != `{"a":1}` {
		t.Fatalf("resume after malformed lines = %v", got)
	}
	c.in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("cairn mcp: %v, stderr %q", err, stderr.String())
	}
}

// TestInterruptSaysSo: a command cut short by SIGINT (its context
// cancelled) says it was interrupted, in one line, and exits 1; it used
// to print the store request the signal cut ("read gc/state: context
// canceled", "write packs/S/...") and, for commit, that the step may have
// been written when the interrupt came before anything was.
func TestInterruptSaysSo(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	for _, args := range [][]string{{"commit", "s", "-"}, {"log", "s"}, {"fork", "s", "t"}, {"gc"}, {"verify"}} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // as SIGINT does to main's context
		var out, errb bytes.Buffer
		code := run(ctx, append([]string{"--store", store}, args...), strings.NewReader(`{"b":2}`), &out, &errb)
		errs := errb.String()
		if code != 1 || !strings.Contains(errs, "interrupted") || strings.Contains(errs, "context canceled") ||
			strings.Contains(errs, "gc/state") || strings.Contains(errs, "packs/") || strings.Count(errs, "\n") != 1 {
			t.Errorf("cairn %s interrupted: exit %d, stderr %q; want exit 1 and one line saying it was interrupted", strings.Join(args, " "), code, errs)
		}
	}
	if out, _, code := cli(t, store, "", "log", "s"); code != 0 || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Fatalf("log after interrupted commands: exit %d %q, want one step", code, out)
	}
}

// TestExportOutUnwritable: an --out (or --manifest) that cannot be
// created is bad input (exit 2) named as the user wrote it; it was exit 1
// naming PATH.tmp, a file the user never mentioned.
func TestExportOutUnwritable(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	missing := filepath.Join(t.TempDir(), "no", "such", "dir")
	for _, args := range [][]string{
		{"export", "--format", "parquet", "--out", filepath.Join(missing, "x.parquet")},
		{"export", "--format", "parquet", "--out", filepath.Join(t.TempDir(), "x.parquet"), "--manifest", filepath.Join(missing, "m.json")},
	} {
		_, errs, code := cli(t, store, "", args...)
		if code != 2 || strings.Contains(errs, ".tmp") || !strings.Contains(errs, missing) || strings.Count(errs, "\n") != 1 {
			t.Errorf("cairn %s: exit %d, stderr %q; want exit 2 naming the path given", strings.Join(args, " "), code, errs)
		}
	}
}

// TestCommitRefusesEscapingSymlink: `commit --dir` stored a symlink that
// leads outside the directory (absolute, or up past its root), which
// checkout then refused after writing part of the tree, and verify called
// the step corrupt. The commit refuses it, as bad input naming the link,
// and writes no step.
func TestCommitRefusesEscapingSymlink(t *testing.T) {
	for _, target := range []string{"../../../etc", "/etc/passwd", "sub/../../x"} {
		store, dir := t.TempDir(), t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(dir, "l")); err != nil {
			t.Fatal(err)
		}
		_, errs, code := cli(t, store, "", "commit", "d", "--dir", dir)
		if code != 2 || !strings.Contains(errs, filepath.Join(dir, "l")) || !strings.Contains(errs, "outside the directory") {
			t.Errorf("commit --dir with a link to %q: exit %d, stderr %q; want exit 2 naming the link", target, code, errs)
		}
		if _, errs, code := cli(t, store, "", "log", "d"); code == 0 {
			t.Errorf("a step was written for a refused directory: %s", errs)
		}
	}
	// A link that stays inside is kept and checks out.
	store, dir := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../f", filepath.Join(dir, "sub", "l")); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, "", "commit", "d", "--dir", dir); code != 0 {
		t.Fatalf("commit --dir with an inside link: %s", errs)
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, errs, code := cli(t, store, "", "checkout", "d", "--dir", out); code != 0 {
		t.Fatalf("checkout: %s", errs)
	}
	if got, err := os.Readlink(filepath.Join(out, "sub", "l")); err != nil || got != "../f" {
		t.Fatalf("checked-out link = %q, %v", got, err)
	}
}
