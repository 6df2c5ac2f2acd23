package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
)

// countingListener counts the bytes the server has read from its
// connections.
type countingListener struct {
	net.Listener
	read *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, read: l.read}, nil
}

type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// TestBodiesArrivingBounded: the budget bounded the bodies being acted
// on, but each request read its whole body before it took its share, so
// bodies arriving at once were in memory without bound (40 commits of
// 30 MB sent at once took a server to 2.9 GB). Bodies now take their
// bytes as they arrive: while the store holds the commits, a crowd of
// large bodies is read no further than the budget, one body beyond it
// and a small piece each, and every one of them is committed in the end.
func TestBodiesArrivingBounded(t *testing.T) {
	const maxBody = 256 << 10
	store := newHeldPuts("", false)
	ws := cairn.OpenStore(store)
	ts := httptest.NewUnstartedServer(New(ws, Options{MaxBody: maxBody, BodyTimeout: 20 * time.Second}))
	var read atomic.Int64
	ts.Listener = countingListener{Listener: ts.Listener, read: &read}
	ts.Start()
	release := store.release
	t.Cleanup(ts.Close)
	t.Cleanup(release)
	addr := ts.Listener.Addr().String()
	request := func(session string, size int) string {
		body := `{"state":"` + strings.Repeat("x", size) + `"}`
		return fmt.Sprintf("POST /v1/sessions/%s/steps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", session, len(body), body)
	}
	// The first commit is held in the store with its body.
	first := make(chan int, 1)
	go func() {
		status, _, _ := rawRequest(t, addr, request("first", 200<<10))
		first <- status
	}()
	<-store.held
	const crowd = 12
	statuses := make(chan int, crowd)
	for i := range crowd {
		go func() {
			status, _, _ := rawRequest(t, addr, request(fmt.Sprintf("c%d", i), 200<<10))
			statuses <- status
		}()
	}
	// Let the crowd send what the server will read (the store holds
	// every commit meanwhile, so no body's bytes are given back).
	time.Sleep(time.Second)
	sent := int64(crowd+1) * (200 << 10)
	bound := int64(maxBody) + maxBody + (crowd+1)*(bodyPiece+8<<10)
	if got := read.Load(); got > bound {
		t.Errorf("the server read %d bytes of %d sent while one commit held the budget of %d; want at most %d", got, sent, maxBody, bound)
	}
	release()
	if got := <-first; got != http.StatusCreated {
		t.Fatalf("first: %d", got)
	}
	for range crowd {
		if got := <-statuses; got != http.StatusCreated {
			t.Errorf("a body of the crowd: %d, want 201", got)
		}
	}
}
