package httpapi

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
)

// TestConnectionsCapped: the server kept every connection a client left
// open, idle after a request or silent since it connected, until its
// idle or header timeout: a flood of them ran the process out of file
// descriptors, and then out of the files its local store opens. It keeps
// at most MaxConns now: past it the idle or silent connection waiting
// longest is closed, so an honest client is still served; when every
// one is at work on a request, a new one gets 503 busy, in the API's
// error shape, and is closed.
func TestConnectionsCapped(t *testing.T) {
	const maxConns = 8
	ws := cairn.OpenStore(memStore())
	s, err := ws.Session("s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(t.Context(), cairn.JSON([]byte(`{"n":1}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	srv := New(ws, Options{MaxConns: maxConns})
	addr, _, _ := serveLoopback(t, srv)
	dial := func() net.Conn {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	get := func(conn net.Conn, br *bufio.Reader, path string) (int, string) {
		t.Helper()
		conn.SetDeadline(time.Now().Add(30 * time.Second)) // a guard, not a measurement
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path)
		r, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, string(b)
	}

	// The flood: four times the cap, every other connection idle after a
	// request, the others silent.
	flood := make([]net.Conn, 4*maxConns)
	readers := make([]*bufio.Reader, len(flood))
	for i := range flood {
		flood[i] = dial()
		readers[i] = bufio.NewReader(flood[i])
		if i%2 == 0 {
			if code, b := get(flood[i], readers[i], "/v1/sessions/s/head?state=false"); code != http.StatusOK {
				t.Fatalf("a request of the flood: %d %s", code, b)
			}
		}
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	resp, err := client.Get("http://" + addr + "/v1/sessions/s/head")
	if err != nil {
		t.Fatalf("an honest client beside a flood of idle connections: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("an honest client beside a flood of idle connections: %s", resp.Status)
	}
	var mu sync.Mutex
	var open int
	var wg sync.WaitGroup
	for i, conn := range flood {
		wg.Go(func() {
			conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			_, err := readers[i].ReadByte()
			if errors.Is(err, os.ErrDeadlineExceeded) {
				mu.Lock()
				open++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if open > maxConns {
		t.Errorf("the server keeps %d of %d idle or silent connections open beside an honest one, want at most MaxConns (%d)", open, len(flood), maxConns)
	}

	// Every connection at work (long-polls): a new one is 503 busy.
	for i := range maxConns {
		conn := dial()
		conn.SetDeadline(time.Now().Add(30 * time.Second))
		fmt.Fprintf(conn, "GET /v1/sessions/s/wait?after=1&timeout=20 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		settled(t, "a long-poll did not start", func() bool { return len(srv.waiters) == i+1 })
	}
	conn := dial()
	code, b := get(conn, bufio.NewReader(conn), "/v1/sessions/s/head")
	var e errorBody
	if code != http.StatusServiceUnavailable || json.Unmarshal([]byte(b), &e) != nil || e.Code != "busy" || !strings.Contains(e.Error, "connections") {
		t.Fatalf("a connection beside MaxConns connections at work: %d %s; want 503 busy in the API's error shape, saying the server is at its limit of connections", code, b)
	}
}

// TestAPIAnswerShortStatusLine: a write that starts like Go's own error
// answer but holds less than a status code is passed through, not
// sliced past its end (it panicked).
func TestAPIAnswerShortStatusLine(t *testing.T) {
	cs := newConns(8, 1<<16)
	for _, p := range []string{
		"HTTP/1.1 4" + goErrorHeaders,
		"HTTP/1.1 40" + goErrorHeaders + "x",
		"HTTP/1.1 " + goErrorHeaders,
	} {
		if got := cs.apiAnswer([]byte(p)); got != nil {
			t.Errorf("apiAnswer(%q) = %q; want it left alone", p, got)
		}
	}
}
