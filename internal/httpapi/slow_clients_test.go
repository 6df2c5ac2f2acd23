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

// Set-ups shared by the tests of clients that take an answer slowly or
// send a body slowly: the readers hold the server's one read slot with a
// large state, the uploads hold room in the bodies' budget.

// bigRead starts a server over a workspace holding a state of copies MiB
// in session big and a small one in session small, with one read slot
// and sendTimeout, and asks for big's head on a connection of its own
// (whose receive buffer is readBuffer bytes, if not 0), which it
// returns unread.
func bigRead(t *testing.T, copies int, sendTimeout time.Duration, readBuffer int) (*Server, *httptest.Server, net.Conn) {
	t.Helper()
	ws := cairn.OpenStore(memStore())
	commitBomb(t, ws, "big", copies) // more than the socket buffers hold
	c, err := ws.Session("small")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Commit(t.Context(), cairn.JSON([]byte(`{"n":1}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	srv := New(ws, Options{MaxReads: 1, SendTimeout: sendTimeout})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if readBuffer > 0 {
		_ = conn.(*net.TCPConn).SetReadBuffer(readBuffer)
	}
	if _, err := conn.Write([]byte("GET /v1/sessions/big/head HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	return srv, ts, conn
}

// readSmallBeside reads small's head until it is 200, within 20 s
// (far short of the time the big read would hold its slot), and fails
// the test on any answer but 200 or 503, or past them. beside says what
// the big read's client does, want when the small read should get 200.
func readSmallBeside(t *testing.T, ts *httptest.Server, beside, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(ts.URL + "/v1/sessions/small/head")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return
		}
		if resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("a read beside a client that %s: %s; want 200 %s", beside, resp.Status, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startUpload sends, on a connection of its own, the head of a commit
// to session whose body is framed by the header framing
// ("Content-Length: N", "Transfer-Encoding: chunked"), then sent, the
// part of the body (framing included) sent at once. The connection has
// a guard deadline of 60 s, not a measurement.
func startUpload(t *testing.T, ts *httptest.Server, session, framing, sent string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	fmt.Fprintf(conn, "POST /v1/sessions/%s/steps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n%s\r\n\r\n%s", session, framing, sent)
	return conn
}

// bodiesFree is the room in srv's bodies' budget that no body holds.
func bodiesFree(srv *Server) int64 {
	srv.bodies.mu.Lock()
	defer srv.bodies.mu.Unlock()
	return srv.bodies.free
}

// bodiesArriving is how many bodies srv's budget counts as arriving.
func bodiesArriving(srv *Server) int {
	srv.bodies.mu.Lock()
	defer srv.bodies.mu.Unlock()
	return len(srv.bodies.arriving)
}

// commitBeside commits a state of 16 KiB to session other, and fails the
// test unless it is 201 within 30 s, well short of BodyTimeout: the
// guard a client would give up at. beside says what it is committed
// beside.
func commitBeside(t *testing.T, ts *httptest.Server, beside string) {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Post(ts.URL+"/v1/sessions/other/steps", "application/json", strings.NewReader(`{"state":"`+strings.Repeat("y", 16<<10)+`"}`))
	if err != nil {
		t.Fatalf("a commit to another session beside %s: %v", beside, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("a commit to another session beside %s: %s", beside, resp.Status)
	}
}

// uploadAnswer reads the answer to the upload sent on conn: its status
// and body.
func uploadAnswer(t *testing.T, conn net.Conn) (int, string) {
	t.Helper()
	r, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the upload got no answer: %v", err)
	}
	b, _ := io.ReadAll(r.Body)
	return r.StatusCode, string(b)
}
