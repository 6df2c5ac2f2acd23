package httpapi

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
)

// TestShutdownLetsCommitsFinish: Serve promises requests in flight up to
// 5 s when it stops (SIGTERM to cairn serve); only long-polls end at
// once. It cancelled every request's context instead, so a commit in
// flight failed on the spot and, its error being "canceled", was
// answered 200 with an empty body: a client checking the status took a
// commit that never landed for done. Long-polls ended so too, 200 and
// no body; they end at once with 204, as on a timeout.
func TestShutdownLetsCommitsFinish(t *testing.T) {
	store := newHeldPuts("steps/", true)
	srv := New(cairn.OpenStore(store), Options{})
	addr, stop, served := serveLoopback(t, srv)

	type answer struct {
		status int
		body   string
		err    error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := http.Post("http://"+addr+"/v1/sessions/s/steps", "application/json", strings.NewReader(`{"state":{"n":1}}`))
		if err != nil {
			got <- answer{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- answer{status: resp.StatusCode, body: string(b)}
	}()
	waited := make(chan answer, 1)
	go func() {
		resp, err := http.Get("http://" + addr + "/v1/sessions/w/wait?after=0&timeout=30")
		if err != nil {
			waited <- answer{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		waited <- answer{status: resp.StatusCode, body: string(b)}
	}()
	select {
	case <-store.held:
	case <-time.After(10 * time.Second):
		t.Fatal("the commit did not reach the store")
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		srv.sessions.mu.Lock()
		e := srv.sessions.entries["w"]
		n := 0
		if e != nil {
			n = e.waiters
		}
		srv.sessions.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the long-poll did not start")
		}
	}
	stop()
	time.Sleep(100 * time.Millisecond) // Serve is shutting down
	store.release()
	if a := <-waited; a.err != nil || a.status != http.StatusNoContent {
		t.Errorf("long-poll at shutdown: %d %q %v; want 204 at once", a.status, a.body, a.err)
	}
	a := <-got
	if a.err != nil || a.status != http.StatusCreated {
		t.Errorf("commit in flight at shutdown: %d %q %v; want 201", a.status, a.body, a.err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// TestShutdownCutsOffInWords: a request still unanswered when the 5 s
// of the stop were over (a client still sending its body) made Serve
// return "context deadline exceeded", which cairn serve printed on
// SIGTERM, leaving that connection open. Serve cuts such requests off
// now and says how many, in words.
func TestShutdownCutsOffInWords(t *testing.T) {
	srv := New(cairn.OpenStore(memStore()), Options{})
	addr, stop, served := serveLoopback(t, srv)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST /v1/sessions/s/steps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"state\":"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); srv.inFlight.Load() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request did not reach the server")
		}
	}
	stop()
	select {
	case err := <-served:
		if err == nil || !strings.Contains(err.Error(), "stopped: 1 request still unanswered after 5s was cut off") || strings.Contains(err.Error(), "deadline") {
			t.Errorf("Serve: %v; want it to say that it cut off 1 request", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return")
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(conn); err != nil {
		t.Errorf("the cut-off client's connection: %v; want it closed", err)
	}
}

// serveLoopback runs srv on a loopback port until stop is called (or the
// test ends): addr is where it listens, served gets what Serve returned.
func serveLoopback(t *testing.T, srv *Server) (addr string, stop context.CancelFunc, served <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	return ln.Addr().String(), stop, done
}
