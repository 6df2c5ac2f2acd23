package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestInterruptWhileStdinWaits: Ctrl-C (the command's context done)
// stops a command that waits for its stdin (a terminal nobody types
// into, a producer that stalls) or for a FIFO whose other side nobody
// opened (commit's --json-file, export's --heads and --out): exit 1,
// "interrupted before it finished", nothing committed. cairn commit s -
// caught the signal and went on waiting, so Ctrl-C did nothing at all.
func TestInterruptWhileStdinWaits(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := mkfifo(t, fifo); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	// export reads --heads and writes --out to FIFOs no other side opened.
	heads, out := filepath.Join(t.TempDir(), "heads"), filepath.Join(t.TempDir(), "out")
	for _, p := range []string{heads, out} {
		if err := mkfifo(t, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"commit", "s", "-"},
		{"commit", "s", "--patch", "-"},
		{"commit", "s", "--json-file", fifo},
		{"commit", "s", "--json-file", "/dev/null", "--record-file", "-"},
		{"reply", "s", "--input", "-"},
		{"export", "--format", "atif", "--heads", heads},
		{"export", "--format", "atif", "--out", out},
	} {
		stdin, w := io.Pipe() // nothing is ever written
		ctx, cancel := context.WithCancel(context.Background())
		var stderr bytes.Buffer
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, append([]string{"--store", store}, args...), stdin, io.Discard, &stderr)
		}()
		cancel()
		select {
		case code := <-done:
			if want := "cairn " + args[0] + ": interrupted before it finished\n"; code != 1 || stderr.String() != want {
				t.Errorf("%q interrupted: exit %d, %q; want 1, %q", args, code, stderr.String(), want)
			}
		case <-time.After(time.Minute):
			// Not a measure of speed: the command never returns.
			t.Errorf("%q still waits for its input a minute after Ctrl-C", args)
		}
		w.Close()
	}
	// The FIFOs' readers and writer, left waiting, are let go.
	for _, p := range []string{fifo, heads} {
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
	}
	if f, err := os.Open(out); err == nil {
		f.Close()
	}
	if out, _, _ := cli(t, store, "", "log", "s"); bytes.Count([]byte(out), []byte("\n")) != 1 {
		t.Errorf("log after interrupted commits:\n%s", out)
	}
}
