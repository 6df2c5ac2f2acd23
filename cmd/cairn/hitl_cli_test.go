package main

import (
	"strings"
	"testing"
)

// TestAgentCommandsExitCodes: usage errors of run, serve, inbox and reply
// exit 2 with one line; a reply nobody asked for is a conflict (3).
func TestAgentCommandsExitCodes(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{}`, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"run without --", []string{"run", "--session", "s", "true"}, 2},
		{"run without command", []string{"run", "--session", "s", "--"}, 2},
		{"run without session", []string{"run", "--", "true"}, 2},
		{"run bad session", []string{"run", "--session", "../x", "--", "true"}, 2},
		{"run negative restart", []string{"run", "--session", "s", "--restart", "-1", "--", "true"}, 2},
		{"run failing command", []string{"run", "--session", "s", "--", "false"}, 1},
		{"run ok", []string{"run", "--session", "s", "--", "true"}, 0},
		{"serve beyond loopback without a token", []string{"serve", "--listen", "0.0.0.0:0"}, 2},
		{"serve bad address", []string{"serve", "--listen", "nowhere"}, 2},
		{"serve missing token file", []string{"serve", "--token-file", "/nonexistent/token"}, 2},
		{"inbox extra argument", []string{"inbox", "x"}, 2},
		{"reply without input", []string{"reply", "s"}, 2},
		{"reply bad json", []string{"reply", "s", "--input", "{"}, 2},
		{"reply bad session", []string{"reply", "../s", "--input", "1"}, 2},
		{"reply missing session", []string{"reply", "nope", "--input", "1"}, 1},
		{"reply nobody asked", []string{"reply", "s", "--input", "1"}, 3},
		{"mcp extra argument", []string{"mcp", "x"}, 2},
	}
	for _, c := range cases {
		_, errs, code := cli(t, store, "", c.args...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", c.name, code, c.code, errs)
		}
		if code != 0 && strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%s: stderr %q is not one line", c.name, errs)
		}
	}
	if out, errs, code := cli(t, store, "", "inbox", "--json"); code != 0 || out != "" {
		t.Fatalf("empty inbox: %q %q %d", out, errs, code)
	}
}

// TestCommitOnPausedHeadExit3: a plain commit, or a second question, on
// a session awaiting input exits 3 with one line saying how to answer
// or withdraw, and the question stays in the inbox; reply answers it,
// and --withdraw withdraws a question explicitly.
func TestCommitOnPausedHeadExit3(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "s", "-", "--status", "awaiting_input", "--record", `{"question":"ship?"}`); code != 0 {
		t.Fatal(errs)
	}
	for _, args := range [][]string{
		{"commit", "s", "-"},
		{"commit", "s", "-", "--status", "awaiting_input", "--record", `{"question":"again?"}`},
	} {
		_, errs, code := cli(t, store, `{"a":2}`, args...)
		if code != 3 || !strings.Contains(errs, "awaits input") || !strings.Contains(errs, "--withdraw") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr %q; want exit 3 and one line naming the pending question", strings.Join(args, " "), code, errs)
		}
	}
	if out, _, _ := cli(t, store, "", "inbox"); !strings.Contains(out, "s@1") {
		t.Fatalf("inbox after refused commits: %q", out)
	}
	if _, errs, code := cli(t, store, "", "reply", "s", "--input", `"yes"`); code != 0 {
		t.Fatalf("reply: %s", errs)
	}
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "s", "-", "--status", "awaiting_input", "--record", `{"question":"deploy?"}`); code != 0 {
		t.Fatal(errs)
	}
	if out, errs, code := cli(t, store, `{"a":3}`, "commit", "s", "-", "--withdraw"); code != 0 || !strings.HasPrefix(out, "s@4 ") {
		t.Fatalf("commit --withdraw: exit %d, %q %q", code, out, errs)
	}
	if out, _, _ := cli(t, store, "", "inbox"); strings.Contains(out, "s@") {
		t.Fatalf("inbox after the withdrawal: %q", out)
	}
}

// TestInboxNoQuestion: a session paused with no question in its record
// was listed with an empty question column (the line ended in spaces);
// it now says there is none.
func TestInboxNoQuestion(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "s", "-", "--status", "awaiting_input"); code != 0 {
		t.Fatal(errs)
	}
	out, errs, code := cli(t, store, "", "inbox")
	if code != 0 || !strings.HasPrefix(out, "s@1  ") || !strings.HasSuffix(out, "  (no question)\n") {
		t.Fatalf("inbox: exit %d, %q %q; want s@1 with (no question)", code, out, errs)
	}
}
