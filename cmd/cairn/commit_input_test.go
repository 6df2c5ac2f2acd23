package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/fs"
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

// TestRunWaitEndsWhenSessionRemoved: cairn run --wait, waiting for a
// reply, ends when the session is removed under it (it polled forever),
// with the removal's error and exit code.
func TestRunWaitEndsWhenSessionRemoved(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"q":1}`, "commit", "w", "-", "--status", "awaiting_input", "--record", `{"question":"go on?"}`); code != 0 {
		t.Fatalf("commit: exit %d: %s", code, errs)
	}
	var stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"--store", store, "run", "--wait", "--session", "w", "--", "true"}, strings.NewReader(""), &lockedBuffer{}, &stderr)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), "waiting for a reply") {
		if time.Now().After(deadline) {
			t.Fatalf("cairn run --wait never waited:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, errs, code := cli(t, store, "", "rm", "w"); code != 0 {
		t.Fatalf("rm: exit %d: %s", code, errs)
	}
	select {
	case code := <-done:
		if code != 1 || !strings.Contains(stderr.String(), "cairn run: wait for a reply: session w not found: it was removed") {
			t.Fatalf("cairn run --wait after rm: exit %d, want 1 saying the session was removed:\n%s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("cairn run --wait still waits 20 s after its session was removed:\n%s", stderr.String())
	}
}

// TestCommitRecordFile: --record-file F (- for stdin) carries a record
// past the OS's limit on one argument (128 KiB) up to the 8 MiB a record
// may hold, bounded by that limit, and is exclusive with --record and
// with a state read from stdin.
func TestCommitRecordFile(t *testing.T) {
	store := t.TempDir()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := `{"messages":[{"role":"user","content":"` + strings.Repeat("x", 200<<10) + `"}]}`
	rec := write("big.json", big+"\n")
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "r", "-", "--record-file", rec); code != 0 {
		t.Fatalf("commit --record-file: exit %d: %s", code, errs)
	}
	if out, _, _ := cli(t, store, "", "show", "r", "--record"); out != big+"\n" {
		t.Fatalf("show --record: %d bytes, want the file's record (%d bytes)", len(out), len(big)+1)
	}
	state := write("state.json", `{"a":2}`)
	if _, errs, code := cli(t, store, `{"outcome":"success"}`, "commit", "r", "--json-file", state, "--record-file", "-"); code != 0 {
		t.Fatalf("commit --record-file -: exit %d: %s", code, errs)
	}
	if out, _, _ := cli(t, store, "", "show", "r@2", "--record"); out != `{"outcome":"success"}`+"\n" {
		t.Fatalf("show r@2 --record = %q", out)
	}

	tooBig := write("huge.json", `"`+strings.Repeat("y", 8<<20)+`"`)
	for _, c := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"--json-file", state, "--record-file", rec, "--record", "{}"}, "give --record or --record-file, not both"},
		{`{}`, []string{"-", "--record-file", "-"}, "--record-file - and the state cannot both come from stdin"},
		{`[]`, []string{"--patch", "-", "--record-file", "-"}, "--record-file - and the state cannot both come from stdin"},
		{"", []string{"--json-file", state, "--record-file", tooBig}, "--record-file " + tooBig + ": more than 8388608 bytes, the most a step record may hold"},
		{strings.Repeat(" ", 8<<20+1), []string{"--json-file", state, "--record-file", "-"}, "--record-file - (stdin): more than 8388608 bytes"},
		{"", []string{"--json-file", state, "--record-file", filepath.Join(dir, "missing.json")}, "missing.json: no such file or directory"},
		{"", []string{"--json-file", state, "--record-file", dir}, dir + ": is a directory"},
		{"", []string{"--json-file", state, "--record-file", write("bad.json", "{nope")}, "bad.json is not valid JSON"},
		{"", []string{"--json-file", state, "--record-file", write("empty.json", "\n")}, "empty.json is empty: want a JSON value"},
	} {
		_, errs, code := cli(t, store, c.stdin, append([]string{"commit", "r"}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("commit %v: exit %d, %q; want exit 2 and one line saying %q", c.args, code, errs, c.want)
		}
	}
	if out, _, _ := cli(t, store, "", "log", "r"); strings.Count(out, "\n") != 2 {
		t.Fatalf("refused commits wrote steps:\n%s", out)
	}
	if out, _, _ := cli(t, store, "", "commit", "-h"); !strings.Contains(out, "--record-file FILE") {
		t.Errorf("commit -h does not show --record-file:\n%s", out)
	}
	if readme, err := os.ReadFile("../../README.md"); err != nil || !strings.Contains(string(readme), "--record-file F") {
		t.Errorf("README's CLI table does not show --record-file F (%v)", err)
	}
}

// TestPatchHeadStoredNotUTF8: cairn commit --patch of a head stored with
// bytes that are not UTF-8 (as commits did before the UTF-8 check) loads
// the stored text unchecked and commits; what the command line gives (a
// state, a patch, a record) must be UTF-8, exit 2, and nothing is written.
func TestPatchHeadStoredNotUTF8(t *testing.T) {
	store := t.TempDir()
	ctx := context.Background()
	// Planted below the Go API, which refuses such documents now, as
	// every commit stored them before the checks.
	st, err := fs.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	repo := manifest.NewRepo(st, 0)
	if err := repo.MarkSession(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Commit(ctx, nil, nil, manifest.CommitInput{
		Session: "old",
		Build: func(sink tree.Sink, _ func(cas.ID) bool) (manifest.StateKind, tree.Ref, error) {
			ref, err := tree.BuildJSON([]byte("{\"a\":\"caf\xe9\"}"), sink)
			return manifest.StateJSON, ref, err
		},
	}); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, `[{"op":"add","path":"/b","value":"ok"}]`, "commit", "old", "--patch", "-"); code != 0 {
		t.Fatalf("commit --patch on a head that is not UTF-8: exit %d: %s", code, errs)
	}
	if out, _, _ := cli(t, store, "", "show", "old"); out != "{\"a\":\"caf\xe9\",\"b\":\"ok\"}\n" {
		t.Fatalf("show = %q", out)
	}
	state := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(state, []byte("{\"x\":\"\xff\"}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"[{\"op\":\"add\",\"path\":\"/c\",\"value\":\"\xff\"}]", []string{"--patch", "-"}, "patch: not UTF-8"},
		{"{\"x\":\"\xc3\"}", []string{"-"}, "the state (stdin): invalid JSON: offset 6: not UTF-8"},
		{"", []string{"--json-file", state}, "--json-file " + state + ": invalid JSON: offset 6: not UTF-8"},
		{`{}`, []string{"-", "--record", "{\"model\":\"\xff\"}"}, "--record is not UTF-8"},
	} {
		_, errs, code := cli(t, store, c.stdin, append([]string{"commit", "old"}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("commit %q: exit %d, %q; want exit 2 saying %q", c.args, code, errs, c.want)
		}
	}
	if out, _, _ := cli(t, store, "", "log", "old"); strings.Count(out, "\n") != 2 {
		t.Fatalf("refused commits wrote steps:\n%s", out)
	}
}

// TestBadReferencesSayWhy: a step reference or session name that cannot
// be one is exit 2 in the command line's words: no "invalid argument:"
// (the Go error kind's text), and a step number past 2^64 is said to be
// too large rather than "want N >= 1".
func TestBadReferencesSayWhy(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{}`, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"show", "s@0"}, `bad step reference "s@0": steps are numbered from 1`},
		{[]string{"show", "s@-1"}, `bad step reference "s@-1": want SESSION@N with N a whole number, 1 or more`},
		{[]string{"checkout", "s@", "--dir", t.TempDir()}, `bad step reference "s@": want SESSION@N with N a whole number, 1 or more`},
		{[]string{"fork", "s@99999999999999999999", "t"}, `bad step reference "s@99999999999999999999": step number 99999999999999999999 is too large`},
		{[]string{"fork", "s@0x1", "t"}, `bad step reference "s@0x1": want SESSION@N with N a whole number, 1 or more`},
		{[]string{"commit", "", "-"}, `invalid session name ""`},
		{[]string{"commit", "bad/name", "-"}, `invalid session name "bad/name"`},
		{[]string{"fork", "s", "é"}, `invalid session name "é"`},
	} {
		_, errs, code := cli(t, store, `{}`, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Contains(errs, "invalid argument") {
			t.Errorf("cairn %q: exit %d, %q; want exit 2 saying %q", c.args, code, errs, c.want)
		}
	}
}

// TestCountFlagsAreDecimal: whole-number flags take decimal digits only:
// the flag package read --expect 010 as 8 and --expect 0x1 as 1, so a
// commit could pass an --expect the user did not write. A number past
// the flag's range is said to be out of range.
func TestCountFlagsAreDecimal(t *testing.T) {
	store := t.TempDir()
	for range 2 {
		if _, errs, code := cli(t, store, `{}`, "commit", "s", "-"); code != 0 {
			t.Fatal(errs)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"commit", "s", "-", "--expect", "0x2"}, `--expect "0x2": want a whole number, 0 or more`},
		{[]string{"commit", "s", "-", "--expect", "002"}, ""},
		{[]string{"commit", "s", "-", "--expect", "1_0"}, `--expect "1_0": want a whole number, 0 or more`},
		{[]string{"commit", "s", "-", "--expect", "-1"}, `--expect "-1": want a whole number, 0 or more`},
		{[]string{"commit", "s", "-", "--expect", "99999999999999999999"}, `--expect "99999999999999999999": out of range`},
		{[]string{"prune", "s", "--keep-last", "0x1"}, `--keep-last "0x1": want a whole number, 1 or more`},
		{[]string{"prune", "s", "--keep-last", "99999999999999999999"}, `--keep-last "99999999999999999999": out of range`},
		{[]string{"run", "--session", "s", "--restart", "0x1", "--", "true"}, `--restart "0x1": want a whole number, 0 or more`},
		{[]string{"serve", "--max-body", "1_000"}, `--max-body "1_000": want a size in bytes from 1 to 9223372036854775807`},
	} {
		// On a flag it misreads, serve would serve: a deadline ends it.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var stderr bytes.Buffer
		code := run(ctx, append([]string{"--store", store}, c.args...), strings.NewReader(`{}`), io.Discard, &stderr)
		cancel()
		errs := stderr.String()
		if c.want == "" {
			// 002 is 2, the head: decimal with leading zeros is fine.
			if code != 0 {
				t.Errorf("cairn %q: exit %d, %s", c.args, code, errs)
			}
			continue
		}
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("cairn %q: exit %d, %q; want exit 2 saying %q", c.args, code, errs, c.want)
		}
	}
	if out, _, _ := cli(t, store, "", "log", "s"); strings.Count(out, "\n") != 3 {
		t.Fatalf("log after the refused commits:\n%s", out)
	}
}

// TestCommitInputBounded: what cairn commit reads (stdin, --json-file,
// --patch) is read no further than the limit of one value, and input
// that cannot be read (stdin a directory) is bad input, exit 2, with
// nothing committed.
func TestCommitInputBounded(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	dir := t.TempDir()
	commitFrom := func(stdin io.Reader, args ...string) (string, int) {
		var stderr bytes.Buffer
		code := run(context.Background(), append([]string{"--store", store, "commit", "s"}, args...), stdin, io.Discard, &stderr)
		return stderr.String(), code
	}
	for _, args := range [][]string{{"-"}, {"--patch", "-"}} {
		d, err := os.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		errs, code := commitFrom(d, args...)
		d.Close()
		if code != 2 || !strings.Contains(errs, "(stdin): is a directory") || strings.Count(errs, "\n") != 1 {
			t.Errorf("commit %q with a directory on stdin: exit %d, %q; want exit 2 saying stdin is a directory", args, code, errs)
		}
	}
	t.Setenv("CAIRN_MAX_VALUE_BYTES", "64")
	big := `{"a":"` + strings.Repeat("x", 100) + `"}`
	file := filepath.Join(dir, "big.json")
	if err := os.WriteFile(file, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{big, []string{"-"}, "the state (stdin): more than 64 bytes"},
		{"", []string{"--json-file", file}, "--json-file " + file + ": more than 64 bytes"},
		{`[{"op":"add","path":"/b","value":"` + strings.Repeat("y", 100) + `"}]`, []string{"--patch", "-"}, "--patch - (stdin): more than 64 bytes"},
	} {
		errs, code := commitFrom(strings.NewReader(c.stdin), c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || !strings.Contains(errs, "CAIRN_MAX_VALUE_BYTES") {
			t.Errorf("commit %q: exit %d, %q; want exit 2 saying %q and how to raise it", c.args, code, errs, c.want)
		}
	}
	if out, _, _ := cli(t, store, "", "log", "s"); strings.Count(out, "\n") != 1 {
		t.Fatalf("refused commits wrote steps:\n%s", out)
	}
}

// TestServeTokenFileBounded: --token-file is read no further than a
// token can be (a hostile /dev/zero would fill memory), and a token
// file that cannot be read is bad input, exit 2, naming the flag.
func TestServeTokenFileBounded(t *testing.T) {
	store := t.TempDir()
	long := filepath.Join(t.TempDir(), "long")
	if err := os.WriteFile(long, bytes.Repeat([]byte("t"), 8<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, want string }{
		{"/nonexistent/token", "--token-file /nonexistent/token: no such file or directory"},
		{t.TempDir(), ": is a directory"},
		{long, ": more than 4096 bytes"},
		{"/dev/zero", "--token-file /dev/zero: more than 4096 bytes"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var stderr bytes.Buffer
		code := run(ctx, []string{"--store", store, "serve", "--listen", "127.0.0.1:0", "--token-file", c.file}, strings.NewReader(""), io.Discard, &stderr)
		cancel()
		if code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("serve --token-file %s: exit %d, %q; want exit 2 saying %q", c.file, code, stderr.String(), c.want)
		}
	}
}

// TestRemovedSessionMaintenance: rm, prune and verify of a removed
// session say it was removed, exit 1 (rm said "session has no steps",
// and verify verified it clean with 0 steps); verify names a session
// given twice once.
func TestRemovedSessionMaintenance(t *testing.T) {
	store := t.TempDir()
	for _, s := range []string{"gone", "kept"} {
		if _, errs, code := cli(t, store, `{"a":1}`, "commit", s, "-"); code != 0 {
			t.Fatal(errs)
		}
	}
	if out, errs, code := cli(t, store, "", "rm", "gone"); code != 0 || !strings.HasPrefix(out, "removed gone: 1 step (head was 1);") {
		t.Fatalf("rm gone: exit %d, %q %q", code, out, errs)
	}
	for _, args := range [][]string{{"rm", "gone"}, {"prune", "gone", "--keep-last", "1"}, {"verify", "gone"}, {"verify", "kept", "gone"}} {
		out, errs, code := cli(t, store, "", args...)
		if code != 1 || !strings.Contains(errs, "session gone not found: it was removed") {
			t.Errorf("cairn %q: exit %d, %q %q; want exit 1 saying the session was removed", args, code, out, errs)
		}
	}
	if out, errs, code := cli(t, store, "", "verify", "kept", "kept"); code != 0 || !strings.HasPrefix(out, "verified 1 session, 1 step,") {
		t.Errorf("verify kept kept: exit %d, %q %q; want one session verified", code, out, errs)
	}
}

// TestForkOntoRemovedName: a fork onto the name of a removed session
// (whose old step slots still fence it until gc sweeps them) says so,
// not "session already exists": sessions, show and log all say the
// name is free.
func TestForkOntoRemovedName(t *testing.T) {
	store := t.TempDir()
	for _, s := range []string{"src", "old"} {
		if _, errs, code := cli(t, store, `{"a":1}`, "commit", s, "-"); code != 0 {
			t.Fatal(errs)
		}
	}
	if _, errs, code := cli(t, store, "", "rm", "old"); code != 0 {
		t.Fatal(errs)
	}
	_, errs, code := cli(t, store, "", "fork", "src@1", "old")
	if code != 3 || !strings.Contains(errs, "the session was removed") || strings.Contains(errs, "already exists") {
		t.Fatalf("fork onto a removed name: exit %d, %q; want exit 3 saying old was removed", code, errs)
	}
}

// TestCheckoutDanglingSymlinkDir: --dir naming a symlink to nothing is
// bad input, exit 2, before any work ("mkdir D: file exists", exit 1).
func TestCheckoutDanglingSymlinkDir(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	link := filepath.Join(t.TempDir(), "dangling")
	if err := os.Symlink("nowhere", link); err != nil {
		t.Fatal(err)
	}
	_, errs, code := cli(t, store, "", "checkout", "s", "--dir", link)
	if code != 2 || !strings.Contains(errs, "--dir "+link+": a symlink to nothing") {
		t.Fatalf("checkout --dir dangling: exit %d, %q; want exit 2 naming the dangling symlink", code, errs)
	}
}

// TestRunServeBadValuesAreUsage: a command cairn run cannot start, and
// a --listen address that cannot be one, are bad input (exit 2) said up
// front, not exit 1 after a start ("fork/exec …: gave up after 1 failed
// start") or a listen.
func TestRunServeBadValuesAreUsage(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{}`, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--session", "s", "--", "/nonexistent/agent"}, "cannot run /nonexistent/agent: no such file or directory"},
		{[]string{"run", "--session", "s", "--", "no-such-agent-command"}, `cannot run no-such-agent-command: not found on $PATH`},
		{[]string{"serve", "--listen", "127.0.0.1:99999"}, `--listen "127.0.0.1:99999": invalid port`},
		{[]string{"serve", "--listen", ""}, `--listen "": want HOST:PORT`},
		{[]string{"serve", "--listen", "localhost"}, `--listen "localhost": want HOST:PORT`},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var stderr bytes.Buffer
		code := run(ctx, append([]string{"--store", store}, c.args...), strings.NewReader(""), io.Discard, &stderr)
		cancel()
		errs := stderr.String()
		if code != 2 || !strings.Contains(errs, c.want) || strings.Contains(errs, "fork/exec") {
			t.Errorf("cairn %q: exit %d, %q; want exit 2 saying %q", c.args, code, errs, c.want)
		}
	}
	if out, _, _ := cli(t, store, "", "log", "s"); strings.Count(out, "\n") != 1 {
		t.Fatalf("log:\n%s", out)
	}
}

// TestRunRestartEndsWhenSessionRemoved: a session removed while cairn
// run supervises it is not restarted from an empty state (which went
// on as a new session under the removed name): the run ends saying the
// session was removed, exit 1.
func TestRunRestartEndsWhenSessionRemoved(t *testing.T) {
	bin := cairnBinary(t)
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"n":1}`, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	starts := filepath.Join(t.TempDir(), "starts")
	script := fmt.Sprintf(`echo start >> %q; %q rm s >/dev/null; exit 1`, starts, bin)
	var stderr lockedBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code := run(ctx, []string{"--store", store, "run", "--session", "s", "--restart", "3", "--", "sh", "-c", script}, strings.NewReader(""), io.Discard, &stderr)
	b, _ := os.ReadFile(starts)
	if n := strings.Count(string(b), "start"); code != 1 || n != 1 || !strings.Contains(stderr.String(), "session s not found: it was removed") {
		t.Fatalf("run over a session removed under it: exit %d, %d starts; want exit 1 after 1 start saying the session was removed:\n%s", code, n, stderr.String())
	}
	if out, _, _ := cli(t, store, "", "sessions"); out != "no sessions\n" {
		t.Fatalf("sessions after the run:\n%s", out)
	}
}

// TestMCPStdinDirectory: cairn mcp whose stdin is a directory is bad
// input, exit 2, said as such ("read /dev/stdin: is a directory", exit 1).
func TestMCPStdinDirectory(t *testing.T) {
	bin := cairnBinary(t)
	d, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	cmd := exec.Command(bin, "--store", t.TempDir(), "mcp")
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = d, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || stderr.String() != "cairn mcp: stdin is a directory, not an MCP client's stream\n" {
		t.Fatalf("mcp < directory: %v, %q; want exit 2 saying stdin is a directory", err, stderr.String())
	}
}

// TestForkOntoExistingName: a fork onto a session that has steps names
// the session and its head, exit 3.
func TestForkOntoExistingName(t *testing.T) {
	store := t.TempDir()
	for _, s := range []string{"src", "taken", "taken"} {
		if _, errs, code := cli(t, store, `{"a":1}`, "commit", s, "-"); code != 0 {
			t.Fatal(errs)
		}
	}
	_, errs, code := cli(t, store, "", "fork", "src@1", "taken")
	if want := "session taken already exists (its head is step 2)"; code != 3 || !strings.Contains(errs, want) {
		t.Fatalf("fork onto an existing name: exit %d, %q; want exit 3 saying %q", code, errs, want)
	}
}

// TestForkArgumentsSwapped: `cairn fork new src@1` (the order the command
// list's "start session NEW from step SESSION@N" suggests) said only that
// "src@1" is an invalid session name. It now says the new name comes
// second and shows the command the other way round, exit 2, writing
// nothing.
func TestForkArgumentsSwapped(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "src", "-"); code != 0 {
		t.Fatal(errs)
	}
	_, errs, code := cli(t, store, "", "fork", "new", "src@1")
	if want := "did you mean cairn fork src@1 new?"; code != 2 || !strings.Contains(errs, want) || strings.Contains(errs, "invalid session name") {
		t.Fatalf("fork with its arguments swapped: exit %d, %q; want exit 2 saying %q", code, errs, want)
	}
	if out, errs, code := cli(t, store, "", "sessions"); code != 0 || strings.Contains(out, "new") {
		t.Fatalf("after a refused fork: sessions = %q, %q, exit %d; want no session new", out, errs, code)
	}
	if _, errs, code := cli(t, store, "", "fork", "src@1", "new"); code != 0 {
		t.Fatalf("fork src@1 new: exit %d: %s", code, errs)
	}
}

// TestCommitStrayFileArgument: `cairn commit s --json state.json` (--json
// is the output flag) and `cairn commit s state.json` said only
// `unexpected argument "state.json"`; a directory likewise. The error now
// names the flag that commits it, and nothing is written.
func TestCommitStrayFileArgument(t *testing.T) {
	store := t.TempDir()
	dir := t.TempDir()
	file := filepath.Join(dir, "state.json")
	writeFile(t, file, []byte(`{"a":1}`))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"commit", "s", "--json", file}, "give --json-file " + file},
		{[]string{"commit", "s", file}, "give --json-file " + file},
		{[]string{"commit", "s", dir}, "give --dir " + dir},
	} {
		_, errs, code := cli(t, store, "", c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("cairn %s: exit %d, %q; want exit 2 saying %q", strings.Join(c.args, " "), code, errs, c.want)
		}
	}
	if out, _, _ := cli(t, store, "", "sessions"); strings.Contains(out, "s ") {
		t.Errorf("a refused commit wrote a step: %q", out)
	}
}
