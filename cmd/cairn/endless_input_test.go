package main

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// endless is input that never ends (/dev/zero, /dev/urandom, a stream
// gone wrong), counting what was read of it.
type endless struct {
	rng  *rand.Rand // nil: zero bytes
	read int64
}

func (r *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 0
		if r.rng != nil {
			p[i] = byte(r.rng.Uint32())
		}
	}
	r.read += int64(len(p))
	return len(p), nil
}

// TestCommitEndlessInputThatIsNoJSON: cairn commit - (and --patch -)
// given input that is no JSON and never ends refuses it at once, as
// invalid JSON at its first byte (exit 2), with nothing committed. It
// read it all first, up to $CAIRN_MAX_VALUE_BYTES (64 GiB by default):
// `cairn commit s - < /dev/zero` held a gigabyte more every second until
// the machine ran out of memory.
func TestCommitEndlessInputThatIsNoJSON(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	// A bound the old code reached, that the test can afford.
	t.Setenv("CAIRN_MAX_VALUE_BYTES", "67108864")
	for _, c := range []struct {
		name string
		args []string
		in   *endless
		want string
	}{
		{"zeros", []string{"-"}, &endless{}, "cairn commit: the state (stdin): invalid JSON: offset 0: unexpected character '\\x00'\n"},
		{"random", []string{"-"}, &endless{rng: rand.New(rand.NewPCG(1, 2))}, "cairn commit: the state (stdin): invalid JSON: offset 0: "},
		{"patch zeros", []string{"--patch", "-"}, &endless{}, "cairn commit: "},
	} {
		var stderr bytes.Buffer
		code := run(context.Background(), append([]string{"--store", store, "commit", "s"}, c.args...), c.in, io.Discard, &stderr)
		if code != 2 || !strings.HasPrefix(stderr.String(), c.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%s: exit %d, %q; want exit 2, %q…", c.name, code, stderr.String(), c.want)
		}
		if c.in.read > 1<<20 {
			t.Errorf("%s: read %d bytes of input whose first is no JSON", c.name, c.in.read)
		}
	}
	if out, _, _ := cli(t, store, "", "show", "s"); out != `{"a":1}`+"\n" {
		t.Errorf("the head is now %q", out)
	}
}
