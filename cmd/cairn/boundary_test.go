package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// Regression tests of issue 15: the boundaries a new user touches first.

// TestClosedStdoutExitsQuietly: `cairn log S | head -n 1` must not fail
// a pipeline (set -o pipefail) when head closes the pipe early: the
// command stops and exits 0 without a message (item 1; it died of
// SIGPIPE, status 141 in a shell). The reader is gone before the first
// write, so every run takes the EPIPE path.
func TestClosedStdoutExitsQuietly(t *testing.T) {
	bin := cairnBinary(t)
	store := t.TempDir()
	for i := 1; i <= 3; i++ {
		if _, errs, code := cli(t, store, fmt.Sprintf(`{"n":%d}`, i), "commit", "s", "-"); code != 0 {
			t.Fatal(errs)
		}
	}
	for _, args := range [][]string{{"log", "s"}, {"log", "s", "--json"}, {"sessions"}, {"show", "s"}, {"help"}} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close() // the reader went away
		cmd := exec.Command(bin, append([]string{"--store", store}, args...)...)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = w, &stderr
		err = cmd.Run()
		w.Close()
		if err != nil || stderr.Len() != 0 {
			t.Errorf("cairn %s into a closed pipe: %v, stderr %q; want exit 0, no message", strings.Join(args, " "), err, stderr.String())
		}
	}
	// The same in-process: the writer's EPIPE ends the command quietly.
	var errb bytes.Buffer
	code := run(context.Background(), []string{"--store", store, "log", "s"}, strings.NewReader(""), epipeWriter{}, &errb)
	if code != 0 || errb.Len() != 0 {
		t.Fatalf("log into EPIPE: exit %d, %q", code, errb.String())
	}
}

type epipeWriter struct{}

func (epipeWriter) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}
}

// TestHelpEverywhere: every command's --help and `cairn help CMD` print
// its usage and flags and exit 0 (item 4: run --help exited 2, help run
// ignored its argument).
func TestHelpEverywhere(t *testing.T) {
	store := t.TempDir()
	for name := range commands {
		out, errs, code := cli(t, store, "", name, "--help")
		if code != 0 || !strings.HasPrefix(out, "usage: cairn "+name) || strings.Contains(out, "--store URL") == commands[name].noStore || errs != "" {
			t.Errorf("cairn %s --help: exit %d, %q, %q", name, code, out, errs)
		}
		viaHelp, _, code := cli(t, store, "", "help", name)
		if code != 0 || viaHelp != out {
			t.Errorf("cairn help %s: exit %d, %q; want the same as --help", name, code, viaHelp)
		}
	}
	if out, _, code := cli(t, store, "", "run", "--help"); code != 0 || !strings.Contains(out, "--restart N") || !strings.Contains(out, "--session S") {
		t.Fatalf("run --help: %d %q", code, out)
	}
	if _, errs, code := cli(t, store, "", "help", "nosuch"); code != 2 || !strings.Contains(errs, `unknown command "nosuch"`) {
		t.Fatalf("help nosuch: %d %q", code, errs)
	}
	// help is a command too: its own help says what it does.
	if out, errs, code := cli(t, store, "", "help", "help"); code != 0 || !strings.HasPrefix(out, "usage: cairn help [COMMAND]") {
		t.Fatalf("help help: %d %q %q", code, out, errs)
	}
	if _, errs, code := cli(t, store, "", "run", "--session", "x"); code != 2 || !strings.Contains(errs, "the command goes after --") {
		t.Fatalf("run without --: %d %q", code, errs)
	}
}

// TestServeNamesRealFlags: a non-loopback --listen without a token says
// which flags give one; --token does not exist (item 3).
func TestServeNamesRealFlags(t *testing.T) {
	t.Setenv("CAIRN_TOKEN", "")
	_, errs, code := cli(t, t.TempDir(), "", "serve", "--listen", "0.0.0.0:7475")
	if code != 2 || !strings.Contains(errs, "--token-file") || regexp.MustCompile(`--token\b[^-]`).MatchString(errs) {
		t.Fatalf("serve --listen 0.0.0.0:7475: exit %d, %q", code, errs)
	}
	// Every flag a message names exists.
	for _, f := range regexp.MustCompile(`--[a-z-]+`).FindAllString(errs, -1) {
		if out, _, _ := cli(t, t.TempDir(), "", "serve", "--help"); !strings.Contains(out, f+" ") && !strings.Contains(out, f+"\n") {
			t.Fatalf("the message names %s, which serve does not have", f)
		}
	}
}

// TestVerifyUnknownSession: verify of a mistyped name is not found (exit
// 1), not "verified 1 sessions, 0 steps: 0 problems" (item 5).
func TestVerifyUnknownSession(t *testing.T) {
	store := t.TempDir()
	cli(t, store, `{}`, "commit", "real", "-")
	out, errs, code := cli(t, store, "", "verify", "nosuch")
	if code != 1 || errs != "cairn verify: session nosuch not found: it has no steps\n" || strings.Contains(out, "verified") {
		t.Fatalf("verify nosuch: exit %d, %q %q", code, out, errs)
	}
	if out, _, code := cli(t, store, "", "verify", "real"); code != 0 || !strings.HasPrefix(out, "verified 1 session, 1 step, ") || !strings.HasSuffix(out, ": 0 problems\n") {
		t.Fatalf("verify real: exit %d, %q", code, out)
	}
}

// storeKey matches what a store key looks like in a message.
var storeKey = regexp.MustCompile(`steps/|packs/|sessions/|\d{20}`)

// TestErrorsSpeakSessionsAndSteps: errors about sessions and steps name
// them, not store keys or Go types (item 6).
//
// NOTE for the architecture refactor (issue 12): the "past the head"
// messages come from the root package (Session.Step); the refactor must
// keep them free of store keys.
func TestErrorsSpeakSessionsAndSteps(t *testing.T) {
	store := t.TempDir()
	cli(t, store, `{}`, "commit", "t1", "-")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"show", "t1@9"}, 1, "step t1@9 not found: the session's head is step 1"},
		{[]string{"log", "t1@9"}, 1, "step t1@9 not found: the session's head is step 1"},
		{[]string{"checkout", "t1@9", "--dir", filepath.Join(t.TempDir(), "d")}, 1, "step t1@9 not found: the session's head is step 1"},
		{[]string{"fork", "t1@9", "t2"}, 1, "step t1@9 not found: the session's head is step 1"},
		{[]string{"diff", "t1", "t1@9"}, 1, "step t1@9 not found: the session's head is step 1"},
		{[]string{"show", "nosuch@3"}, 1, "step nosuch@3 not found: session nosuch has no steps"},
		{[]string{"show", "nosuch"}, 1, "session nosuch not found: it has no steps"},
		{[]string{"commit", "t1", "-", "--expect", "1.5"}, 2, `--expect "1.5": want a whole number`},
		{[]string{"gc", "--grace", "5"}, 2, `--grace "5": want a duration`},
		{[]string{"gc", "--grace", "9999999999h"}, 2, `--grace "9999999999h": out of range (at most 2562047h)`},
		{[]string{"gc", "--dry-run=maybe"}, 2, `--dry-run="maybe": want true or false`},
		{[]string{"log", "t1", "--nope"}, 2, "unknown flag --nope"},
	}
	for _, c := range cases {
		_, errs, code := cli(t, store, `{}`, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("cairn %s: exit %d, %q; want %d and %q", strings.Join(c.args, " "), code, errs, c.code, c.want)
		}
		if storeKey.MatchString(errs) || strings.Contains(errs, "Go ") || strings.Contains(errs, "for flag -") || strings.Contains(errs, "parse error") {
			t.Errorf("cairn %s: %q leaks store keys or Go names", strings.Join(c.args, " "), errs)
		}
	}
}

// TestBadPathsAreUsageErrors: a --json-file or --dir that cannot serve
// is bad input, exit 2, in the flag's words (item 7).
func TestBadPathsAreUsageErrors(t *testing.T) {
	store, dir := t.TempDir(), t.TempDir()
	cli(t, store, `{}`, "commit", "s", "-")
	full := filepath.Join(dir, "full")
	os.MkdirAll(full, 0o755)
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"commit", "s", "--json-file", filepath.Join(dir, "missing.json")}, "--json-file "},
		{[]string{"commit", "s", "--json-file", dir}, "is a directory"},
		{[]string{"commit", "s", "--dir", filepath.Join(dir, "missing")}, "--dir "},
		{[]string{"checkout", "s", "--dir", full}, "is not empty"},
		{[]string{"run", "--session", "r", "--dir", full, "--", "true"}, "is not empty"},
	}
	for _, c := range cases {
		_, errs, code := cli(t, store, "", c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("cairn %s: exit %d, %q; want 2 and %q", strings.Join(c.args, " "), code, errs, c.want)
		}
	}
}

// TestMistypedStoreIsNotCreated: read-only commands on a --store path
// that does not exist say so (exit 1) and create nothing; the first
// commit makes the store (item 7).
func TestMistypedStoreIsNotCreated(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no", "such", "store")
	for _, args := range [][]string{{"sessions"}, {"inbox"}, {"du"}, {"verify"}, {"gc"}, {"log", "s"}, {"show", "s"},
		{"export", "--format", "openai-jsonl"}, {"rm", "s"}, {"prune", "s", "--keep-last", "1"}, {"fork", "s@1", "t"}, {"reply", "s", "--input", "1"}} {
		_, errs, code := cli(t, missing, "", args...)
		if code != 1 || !strings.Contains(errs, "no store at "+missing) {
			t.Errorf("cairn %s on a missing store: exit %d, %q", args[0], code, errs)
		}
		if _, err := os.Stat(missing); !os.IsNotExist(err) {
			t.Fatalf("cairn %s created the mistyped store %s", args[0], missing)
		}
	}
	t.Setenv("CAIRN_STORE", missing)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"sessions"}, strings.NewReader(""), &out, &errb); code != 1 || !strings.Contains(errb.String(), "no store at") {
		t.Fatalf("sessions with a missing $CAIRN_STORE: exit %d, %q", code, errb.String())
	}
	// The default store before its first commit is simply empty.
	t.Setenv("CAIRN_STORE", "")
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	out.Reset()
	if code := run(context.Background(), []string{"sessions"}, strings.NewReader(""), &out, &errb); code != 0 || out.String() != "no sessions\n" {
		t.Fatalf("sessions on a fresh default store: exit %d, %q", code, out.String())
	}
	if _, errs, code := cli(t, missing, `{}`, "commit", "s", "-"); code != 0 {
		t.Fatalf("first commit to a new store: %s", errs)
	}
	if out, _, code := cli(t, missing, "", "sessions"); code != 0 || !strings.HasPrefix(out, "s ") {
		t.Fatalf("sessions after the first commit: %d %q", code, out)
	}
}

// TestReplyLimitNamed: an --input over 512 KiB is refused naming the
// limit, not as "not valid JSON" (item 8).
func TestReplyLimitNamed(t *testing.T) {
	store := t.TempDir()
	cli(t, store, `{}`, "commit", "h", "-", "--status", "awaiting_input", "--record", `{"question":"ok?"}`)
	big := `"` + strings.Repeat("x", 600<<10) + `"` // valid JSON, too large
	for _, args := range [][]string{{"reply", "h", "--input", big}, {"reply", "h", "--input", "-"}} {
		_, errs, code := cli(t, store, big, args...)
		if code != 2 || !strings.Contains(errs, "over the limit of 524288 bytes") {
			t.Fatalf("reply of 600 KiB: exit %d, %q", code, errs)
		}
	}
}

// TestOutputPolish: output a person reads is aligned, counted in the
// right number and consistently named (item 9).
func TestOutputPolish(t *testing.T) {
	store := t.TempDir()
	for i, st := range []string{"running", "awaiting_input", "done"} {
		args := []string{"commit", "s", "-", "--status", st}
		if i == 2 {
			args = append(args, "--withdraw") // step 2 asked a question
		}
		if _, errs, code := cli(t, store, fmt.Sprintf(`{"n":%d}`, i), args...); code != 0 {
			t.Fatal(errs)
		}
	}
	cli(t, store, "", "fork", "s@2", "a-longer-name")
	if _, errs, code := cli(t, store, `{"n":9}`, "commit", "a-longer-name", "-", "--withdraw"); code != 0 {
		t.Fatal(errs)
	}
	for _, sess := range []string{"s", "a-longer-name"} {
		out, _, _ := cli(t, store, "", "log", sess)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		// Every line's columns start at the same offsets: id, time, status, step.
		col := strings.Index(lines[0], sess+"@")
		for _, l := range lines {
			if strings.HasSuffix(l, " ") {
				t.Errorf("log line %q ends in spaces", l)
			}
			if i := strings.Index(l, "@"); i < 0 || strings.LastIndex(l[:i], " ")+1 != col {
				t.Errorf("log %s: columns misalign:\n%s", sess, out)
				break
			}
		}
	}
	out, _, _ := cli(t, store, "", "sessions", "--json")
	var line map[string]any
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &line); err != nil || line["step"] == nil || line["head"] != nil {
		t.Fatalf("sessions --json line %q: want \"step\" as in log and inbox", out)
	}
	if out, _, _ := cli(t, store, "", "verify", "s"); !strings.HasPrefix(out, "verified 1 session, 3 steps, ") {
		t.Fatalf("verify: %q", out)
	}
	// A tiny session stores more than its raw bytes: no 0.1x dedup.
	out, _, _ = cli(t, store, "", "du", "s")
	if regexp.MustCompile(`\b0\.\dx`).MatchString(out) || strings.Contains(out, " 1 objects") {
		t.Fatalf("du of a tiny session:\n%s", out)
	}
	empty := t.TempDir()
	if out, _, code := cli(t, empty, "", "inbox"); code != 0 || out != "no session awaits input\n" {
		t.Fatalf("empty inbox: %d %q", code, out)
	}
}

// TestVersion: cairn version and --version name the build, and MCP
// says the same in its server info (item 11).
func TestVersion(t *testing.T) {
	out, _, code := cli(t, t.TempDir(), "", "version")
	if code != 0 || !strings.HasPrefix(out, "cairn ") || strings.Contains(out, "dev\n") {
		t.Fatalf("version: %d %q", code, out)
	}
	var b bytes.Buffer
	if code := run(context.Background(), []string{"--version"}, nil, &b, &b); code != 0 || b.String() != out {
		t.Fatalf("--version: %d %q, want %q", code, b.String(), out)
	}
	// A build stamped at link time (make build, make install) says so.
	bin := filepath.Join(t.TempDir(), "cairn")
	if o, err := exec.Command("go", "build", "-ldflags", "-X github.com/cairnlog/cairn/internal/version.override=v9.8.7-test", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, o)
	}
	if o, err := exec.Command(bin, "version").Output(); err != nil || !strings.HasPrefix(string(o), "cairn v9.8.7-test ") {
		t.Fatalf("stamped version: %q %v", o, err)
	}
	// Parquet's created_by names the same version.
	store := t.TempDir()
	pq := filepath.Join(t.TempDir(), "steps.parquet")
	cli(t, store, `{}`, "commit", "s", "-", "--record", `{"messages":[{"role":"user","content":"hi"}]}`)
	if o, err := exec.Command(bin, "--store", store, "export", "--format", "parquet", "--out", pq).CombinedOutput(); err != nil {
		t.Fatalf("export: %v\n%s", err, o)
	}
	if b, _ := os.ReadFile(pq); !bytes.Contains(b, []byte("cairn version v9.8.7-test (build")) {
		t.Fatalf("Parquet created_by lacks the version")
	}
	cmd := exec.Command(bin, "--store", t.TempDir(), "mcp")
	in, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	c := &rpcClient{t: t, in: in, out: bufio.NewReader(stdout)}
	var init struct {
		ServerInfo struct{ Version string } `json:"serverInfo"`
	}
	json.Unmarshal(c.call("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "cairn-test", "version": "1"},
	}), &init)
	if init.ServerInfo.Version != "v9.8.7-test" {
		t.Fatalf("MCP server info version %q, want v9.8.7-test", init.ServerInfo.Version)
	}
}
