package mcpserver

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
)

// putsGated holds every Put until gate is closed or the caller's context
// ends, saying on held which session's put began waiting (once a
// session) and on stopped which session's put its context ended.
type putsGated struct {
	cas.Store
	gate    chan struct{}
	mu      sync.Mutex
	seen    map[string]bool
	held    chan string
	stopped chan string
}

func newPutsGated() *putsGated {
	return &putsGated{Store: mem.New(), gate: make(chan struct{}), seen: map[string]bool{},
		held: make(chan string, 8), stopped: make(chan string, 8)}
}

func (g *putsGated) session(key string) string {
	for _, s := range []string{"gone", "kept"} {
		if strings.Contains(key, s) {
			return s
		}
	}
	return key
}

func (g *putsGated) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	s := g.session(key)
	g.mu.Lock()
	if !g.seen[s] {
		g.seen[s] = true
		g.held <- s
	}
	g.mu.Unlock()
	select {
	case <-g.gate:
	case <-ctx.Done():
		g.stopped <- s
		return ctx.Err()
	}
	return g.Store.Put(ctx, key, data, opts)
}

// TestCancelledCallStopsUnanswered: a call the client cancelled
// (notifications/cancelled) had its work stopped, and was then answered
// anyway, with an error the client no longer waits for, which MCP
// forbids ("MUST NOT send a response for the cancelled request"). Its
// work still stops now, and no answer goes out with its id; a call in
// flight beside it, and calls after it, are answered as ever.
func TestCancelledCallStopsUnanswered(t *testing.T) {
	store := newPutsGated()
	s := startStdioOn(t, store, MaxInFlight)
	var open sync.Once
	release := func() { open.Do(func() { close(store.gate) }) }
	t.Cleanup(release) // before the session's end, which waits for calls in flight
	wait := func(c chan string, want, what string) {
		t.Helper()
		select {
		case got := <-c:
			if got != want {
				t.Fatalf("%s: session %s, want %s", what, got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: nothing in 10 s", what)
		}
	}
	s.send(`{"jsonrpc":"2.0","id":"kept","method":"tools/call","params":{"name":"checkpoint","arguments":{"session":"kept","state_json":"{\"n\":1}"}}}`)
	wait(store.held, "kept", "the kept call's first put")
	s.send(`{"jsonrpc":"2.0","id":"gone","method":"tools/call","params":{"name":"checkpoint","arguments":{"session":"gone","state_json":"{\"n\":1}"}}}`)
	wait(store.held, "gone", "the cancelled call's first put")
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"gone","reason":"the user gave up"}}`)
	wait(store.stopped, "gone", "the cancelled call's work stopped")

	s.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	if r := s.next(); string(r.ID) != `"after"` || r.Error != nil {
		t.Fatalf("the call after the cancellation: got %s, want the answer to \"after\" (and none to \"gone\")", r.raw)
	}
	time.Sleep(200 * time.Millisecond) // room for an answer to "gone" to go out before the next
	release()
	if r := s.next(); string(r.ID) != `"kept"` || r.Error != nil || strings.Contains(string(r.Result), `"isError":true`) {
		t.Fatalf("the call in flight beside the cancelled one: got %s, want its answer", r.raw)
	}
	s.send(`{"jsonrpc":"2.0","id":"last","method":"ping"}`)
	if r := s.next(); string(r.ID) != `"last"` || r.Error != nil {
		t.Fatalf("the last call: got %s, want its answer (and none to \"gone\")", r.raw)
	}
	ctx := context.Background()
	kept, _ := s.ws.Session("kept")
	if h, err := kept.Head(ctx); err != nil || h.Number != 1 {
		t.Errorf("the kept call's step: %v, %v", h, err)
	}
	gone, _ := s.ws.Session("gone")
	if _, err := gone.Head(ctx); !errors.Is(err, cairn.ErrNotFound) {
		t.Errorf("the cancelled call's session: %v, want no step", err)
	}
}
