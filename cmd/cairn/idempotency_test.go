package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/s3test"
)

// TestIdempotencyHint pins the safe move commit and reply add to a step
// that may have been written, with a key and without: no test reaches it
// through a lost answer, and each command says it in its own words.
func TestIdempotencyHint(t *testing.T) {
	for _, c := range []struct {
		command, lands, key, want string
	}{
		{"commit", "step", "", "to land a step once, however often its answer is lost, give each commit an --idempotency-key and its retries the same"},
		{"commit", "step", "k", "retry with the same --idempotency-key: if the step landed, the retry prints it and writes no second one"},
		{"reply", "reply", "", "to land a reply once, however often its answer is lost, give it an --idempotency-key and its retries the same"},
		{"reply", "reply", "k", "retry with the same --idempotency-key: if the reply landed, the retry prints it and writes no second one"},
	} {
		fs := newFlags(&env{stdout: io.Discard}, c.command, "")
		f := newIdempotencyFlag(fs, c.lands)
		args := []string{}
		if c.key != "" {
			args = append(args, "--idempotency-key", c.key)
		}
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		lost := fmt.Errorf("commit s@2: %w", cairn.ErrMaybeWritten)
		err := f.maybeWritten(lost)
		if got, want := err.Error(), lost.Error()+" ("+c.want+")"; got != want {
			t.Errorf("%s, key %q:\n got %q\nwant %q", c.command, c.key, got, want)
		}
		if !errors.Is(err, cairn.ErrMaybeWritten) {
			t.Errorf("%s, key %q: the hint hides ErrMaybeWritten", c.command, c.key)
		}
		if other := errors.New("other"); f.maybeWritten(other) != other {
			t.Errorf("%s, key %q: another error was changed", c.command, c.key)
		}
	}
}

// TestCommitLostAnswerHint: a commit whose step reached the store but
// whose answer was lost says the safe move, whatever its input. A JSON
// document on stdin or in --json-file once left it out: only --dir and
// --patch said it.
func TestCommitLostAnswerHint(t *testing.T) {
	b := s3test.StartMinIO(t)
	bin := cairnBinary(t)
	px := newS3Proxy(t, b.Endpoint)
	store := fmt.Sprintf("minio://%s/%s/lost?secure=false&attempts=1", px.Host, b.Name)
	env := processEnv(t, b, t.TempDir())
	doc := filepath.Join(t.TempDir(), "doc.json")
	dir := t.TempDir()
	for _, p := range []string{doc, filepath.Join(dir, "f")} {
		if err := os.WriteFile(p, []byte(`{"n":1}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const noKey = "(to land a step once, however often its answer is lost, give each commit an --idempotency-key and its retries the same)\n"
	const withKey = "(retry with the same --idempotency-key: if the step landed, the retry prints it and writes no second one)\n"
	for i, c := range []struct {
		name string
		args []string
		want string
	}{
		{"stdin", []string{"-"}, noKey},
		{"--json-file", []string{"--json-file", doc}, noKey},
		{"--dir", []string{"--dir", dir}, noKey},
		{"--json-file with a key", []string{"--json-file", doc, "--idempotency-key", "k"}, withKey},
	} {
		px.loseSteps(1)
		cmd := exec.Command(bin, append([]string{"--store", store, "commit", fmt.Sprint("s", i)}, c.args...)...)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(`{"n":1}`)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.HasSuffix(errb.String(), c.want) {
			t.Errorf("%s: exit %d (%v), %q; want exit 1 ending %q", c.name, code, err, errb.String(), c.want)
		}
	}
}
