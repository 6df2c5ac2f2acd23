package httpapi

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
)

// rawRequest sends req as written on a new connection and returns the
// answer's status and body, and how long the answer took.
func rawRequest(t *testing.T, addr, req string) (int, string, time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second)) // a guard, not a measurement
	start := time.Now()
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to %q: %v", req[:min(len(req), 80)], err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), time.Since(start)
}

// TestDeclaredOversizeBodyRefusedAtOnce: a request whose Content-Length
// is over MaxBody was read up to the limit (or, if the body never came,
// waited for until BodyTimeout) before its 413. It gets the 413 at once
// now, without a byte of the body read.
func TestDeclaredOversizeBodyRefusedAtOnce(t *testing.T) {
	ws := cairn.OpenStore(memStore())
	ts := httptest.NewServer(New(ws, Options{MaxBody: 1 << 10, BodyTimeout: 20 * time.Second}))
	t.Cleanup(ts.Close)
	status, body, took := rawRequest(t, ts.Listener.Addr().String(),
		"POST /v1/sessions/big/steps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 99999999999\r\n\r\n{\"state\":")
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(body, "1024 bytes") {
		t.Fatalf("declared 99999999999 bytes: %d %s, want 413 naming the limit", status, body)
	}
	if took > 10*time.Second {
		t.Fatalf("the 413 took %v: the server waited for a body it would refuse", took)
	}
}
