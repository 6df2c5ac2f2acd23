package httpapi

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
)

// TestSlowReadersLetOthersRead: a client that asks for a large state and
// takes it slowly, never leaving 64 KiB of it unread for SendTimeout,
// held its read slot until the whole answer had gone out: MaxReads such
// clients (2 KB a second each by default: for a 32 MiB state, hours)
// left every other client 503 on every read all that while. Once a read
// is refused for want of a slot, each answer being sent has SendTimeout
// from then to go out, and is cut off past it.
func TestSlowReadersLetOthersRead(t *testing.T) {
	ws := cairn.OpenStore(memStore())
	commitBomb(t, ws, "big", 64) // 64 MiB of state: more than the socket buffers hold
	c, err := ws.Session("small")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Commit(t.Context(), cairn.JSON([]byte(`{"n":1}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	srv := New(ws, Options{MaxReads: 1, SendTimeout: 5 * time.Second})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)

	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /v1/sessions/big/head HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		// Slow, but never leaving 64 KiB unread for SendTimeout: the
		// whole state would take a minute or more.
		defer close(done)
		buf := make([]byte, 64<<10)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // a guard, not a measurement
			if _, err := conn.Read(buf); err != nil {
				return // cut off
			}
		}
	}()
	defer func() { close(stop); <-done }()
	settled(t, "the slow reader did not take the read slot", func() bool { return len(srv.reads) == 1 })

	// Far short of the minutes the slow reader would hold its slot.
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(ts.URL + "/v1/sessions/small/head")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		if resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("a read beside a client that reads slowly: %s; want 200 once the slow one has had SendTimeout to finish", resp.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
