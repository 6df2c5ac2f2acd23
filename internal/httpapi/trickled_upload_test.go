package httpapi

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
)

// TestTrickledUploadsLetOthersCommit: clients that sent most of a body
// and then a byte now and then, never pausing for StallTimeout, held
// their bytes of the bodies' budget until BodyTimeout: every commit
// beside them, to any session, waited that long, and a few such clients
// starting again kept every other commit waiting for ever. A body that
// others wait for now has StallTimeout to arrive in full, then 408,
// and the commits waiting go on.
func TestTrickledUploadsLetOthersCommit(t *testing.T) {
	const maxBody = 64 << 10
	srv := New(cairn.OpenStore(memStore()), Options{MaxBody: maxBody,
		StallTimeout: 500 * time.Millisecond, BodyTimeout: time.Hour})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)

	var conns []net.Conn
	stop := make(chan struct{})
	trickled := make(chan struct{})
	for i := range 2 {
		conn, err := net.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(60 * time.Second)) // a guard, not a measurement
		sent := `{"state":"` + strings.Repeat("x", 40<<10)
		fmt.Fprintf(conn, "POST /v1/sessions/trickle%d/steps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", i, maxBody, sent)
		conns = append(conns, conn)
	}
	go func() {
		defer close(trickled)
		for {
			for _, c := range conns {
				c.Write([]byte("x")) // well within StallTimeout, for ever
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	defer func() { close(stop); <-trickled }()
	settled(t, "the trickled uploads did not take the budget", func() bool {
		srv.bodies.mu.Lock()
		defer srv.bodies.mu.Unlock()
		return srv.bodies.free < 16<<10
	})

	// Far short of BodyTimeout (an hour): the guard a client would give up at.
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Post(ts.URL+"/v1/sessions/other/steps", "application/json", strings.NewReader(`{"state":"`+strings.Repeat("y", 16<<10)+`"}`))
	if err != nil {
		t.Fatalf("a commit beside trickled uploads: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("a commit beside trickled uploads: %s", resp.Status)
	}
	for i, conn := range conns {
		r, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("trickled upload %d got no answer: %v", i, err)
		}
		b, _ := io.ReadAll(r.Body)
		if r.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "waited") {
			t.Errorf("trickled upload %d: %d %s; want 408 saying others waited for it", i, r.StatusCode, b)
		}
	}
}
