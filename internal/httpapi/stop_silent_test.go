package httpapi

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
)

// TestStopWithConnectionsThatSentNothing: a client that connected and
// sent nothing, or only part of a request's head, has no request for a
// stopping server to finish. Serve waited its 5 s grace for them, then
// returned "stopped: 0 requests still unanswered after 5s were cut off",
// which cairn serve turned into exit 1 after a plain SIGTERM. It closes
// the silent ones at once and stops cleanly.
func TestStopWithConnectionsThatSentNothing(t *testing.T) {
	for _, sent := range []string{"", "GET /v1/sessions HTTP/1.1\r\nHost: x\r\n"} {
		srv := New(cairn.OpenStore(memStore()), Options{})
		addr, stop, served := serveLoopback(t, srv)
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte(sent)); err != nil {
			t.Fatal(err)
		}
		// Once the server answers a request on another connection, it
		// has accepted this one (the listener's queue is in order).
		resp, err := http.Get("http://" + addr + "/v1/sessions")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		stop()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve stopped with a connection that sent %q: %v, want nil", sent, err)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("Serve did not stop in 60 s with a connection that sent %q", sent)
		}
	}
}
