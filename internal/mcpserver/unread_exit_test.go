package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// bigWrite is a writer that says on started when a write of more than
// 128 KiB (a resume's answer) begins.
type bigWrite struct {
	io.Writer
	once    sync.Once
	started chan struct{}
}

func (w *bigWrite) Write(p []byte) (int, error) {
	if len(p) > 128<<10 {
		w.once.Do(func() { close(w.started) })
	}
	return w.Writer.Write(p)
}

// runUnread runs the server over a stdin the test writes and a stdout
// (a pipe) nobody reads, sends it resumes of a state larger than the
// pipe holds, and returns once an answer is being written: stdin, the
// cancel of Run's context and the channel Run's end is sent on.
func runUnread(t *testing.T) (*io.PipeWriter, context.CancelFunc, <-chan error) {
	t.Helper()
	store := mem.New()
	s0, err := cairn.OpenStore(store).Session("big")
	if err != nil {
		t.Fatal(err)
	}
	doc := `{"x":"` + strings.Repeat("abcdefgh", 32<<10) + `"}` // 256 KiB
	if _, err := s0.Commit(t.Context(), cairn.JSON([]byte(doc)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW, err := os.Pipe() // never read
	if err != nil {
		t.Fatal(err)
	}
	out := &bigWrite{Writer: outW, started: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() { ended <- New(cairn.OpenStore(store), "test").Run(ctx, transport(inR, out, MaxInFlight)) }()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close() // the write left waiting fails
		outW.Close()
	})
	go func() {
		io.WriteString(inW, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
		io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		for i := range 3 {
			fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"resume","arguments":{"session":"big"}}}`+"\n", i)
		}
	}()
	select {
	case <-out.started:
	case <-time.After(30 * time.Second):
		t.Fatal("no answer began to be written")
	}
	return inW, cancel, ended
}

// TestUnreadStdoutEndOfInput: a client that closed stdin but does not
// read stdout (hung, or waiting for the server to exit before it reads)
// kept cairn mcp running for ever: the answer being written held the
// flight's lock, so the end of input's grace (endGrace) never ended, and
// the SDK waits for every call, each blocked writing. The session ends
// now once endGrace has passed, its unsent answers dropped.
func TestUnreadStdoutEndOfInput(t *testing.T) {
	was := endGrace
	endGrace = 300 * time.Millisecond
	t.Cleanup(func() { endGrace = was })
	in, _, ended := runUnread(t)
	in.Close()
	select {
	case err := <-ended:
		if !errors.Is(err, ErrAbandoned) {
			t.Errorf("Run: %v, want ErrAbandoned", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the session did not end after the end of input, its client reading no answer")
	}
}

// TestUnreadStdoutCancel: with answers that no one reads, cancelling
// Run (SIGINT to cairn mcp) did not end it either: Run waits for the
// calls, each blocked writing its answer.
func TestUnreadStdoutCancel(t *testing.T) {
	_, cancel, ended := runUnread(t)
	cancel()
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return once cancelled, its client reading no answer")
	}
}
