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
	"github.com/cairnlog/cairn/cas"
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
	return runUnreadIDs(t, "0", "1", "2")
}

// runUnreadIDs is runUnread sending a resume under each of ids.
func runUnreadIDs(t *testing.T, ids ...string) (*io.PipeWriter, context.CancelFunc, <-chan error) {
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
		for _, id := range ids {
			fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"resume","arguments":{"session":"big"}}}`+"\n", id)
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

// TestUnreadStdoutEndOfInputHeld: the end of input ended a session whose
// client reads no answer only if the filter reached it. A request held
// before it (the id of a call whose answer is going out, or a call past
// MaxCalls) kept the filter from reading on, so a client that sent such
// calls, closed stdin and waited for cairn mcp to exit before reading
// kept it running for ever. The lines are read ahead now, and the end of
// input found behind a held request ends the session once endGrace has
// passed with no answer taken.
func TestUnreadStdoutEndOfInputHeld(t *testing.T) {
	was := endGrace
	endGrace = 300 * time.Millisecond
	t.Cleanup(func() { endGrace = was })
	many := make([]string, 2*MaxCalls)
	for i := range many {
		many[i] = fmt.Sprint(i)
	}
	for name, tc := range map[string]struct{ ids, then []string }{
		"an id reused while its answer goes out": {ids: []string{"5"}, then: []string{"5"}},
		"more calls than MaxCalls":               {ids: many},
	} {
		t.Run(name, func(t *testing.T) {
			in, _, ended := runUnreadIDs(t, tc.ids...)
			for _, id := range tc.then { // once an answer is being written
				fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"resume","arguments":{"session":"big"}}}`+"\n", id)
			}
			time.Sleep(200 * time.Millisecond) // the last line reaches the filter, and is held
			in.Close()
			select {
			case err := <-ended:
				if !errors.Is(err, ErrAbandoned) {
					t.Errorf("Run: %v, want ErrAbandoned", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the session did not end after the end of input, its client reading no answer")
			}
		})
	}
}

// slowStore makes each Put take a while, as a store far away does.
type slowStore struct {
	cas.Store
	d time.Duration
}

func (s slowStore) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	time.Sleep(s.d)
	return s.Store.Put(ctx, key, data, opts)
}

// TestEndOfInputWaitsWhileAnswered: the end of input's grace (endGrace)
// bounds how long cairn mcp waits for an answer to go out, not how long
// it answers: calls piped in and closed (`printf ... | cairn mcp`) that
// take longer together than the grace, each answered in turn, are all
// answered, although the end of input is read long before the last.
//
// The grace is 2 s, and answers go out about every 250 ms: a loaded
// machine must not leave the test's reader, or the server, without the
// CPU for a whole grace (with 300 ms and 60 ms it failed under a load
// average of 12).
func TestEndOfInputWaitsWhileAnswered(t *testing.T) {
	was := endGrace
	endGrace = 2 * time.Second
	t.Cleanup(func() { endGrace = was })
	s := startStdioOn(t, slowStore{Store: mem.New(), d: 250 * time.Millisecond}, MaxInFlight)
	const calls = 6 * MaxCalls // about 6 * 2 * 250 ms, well past endGrace
	for i := range calls {
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"checkpoint","arguments":{"session":"s%d","state_json":"{}"}}}`, i, i))
	}
	s.in.Close()
	got := map[string]bool{}
	for range calls {
		r := s.next()
		if r.Error != nil || strings.Contains(string(r.Result), `"isError":true`) {
			t.Fatalf("answer %s", r.raw)
		}
		got[string(r.ID)] = true
	}
	if len(got) != calls {
		t.Fatalf("%d distinct calls answered, want %d", len(got), calls)
	}
}
