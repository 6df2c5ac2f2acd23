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

// TestStalledUploadLetsOthersCommit: a client that sent most of a large
// body and then stopped sending (a dead network path, a suspended
// agent) held those bytes of the bodies' budget until BodyTimeout, 60 s
// by default: every other commit, to any session, whose body did not fit
// beside it waited that long. A body that sends nothing for
// StallTimeout is cut off now (408), and the others go on.
func TestStalledUploadLetsOthersCommit(t *testing.T) {
	const maxBody = 64 << 10
	srv := New(cairn.OpenStore(memStore()), Options{MaxBody: maxBody, StallTimeout: 200 * time.Millisecond})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(60 * time.Second)) // a guard, not a measurement
	sent := `{"state":"` + strings.Repeat("x", maxBody-20)
	fmt.Fprintf(conn, "POST /v1/sessions/stalled/steps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", maxBody, sent)
	settled(t, "the stalled upload did not take its bytes", func() bool {
		srv.bodies.mu.Lock()
		defer srv.bodies.mu.Unlock()
		return srv.bodies.free < 16<<10
	})

	// Well short of BodyTimeout (60 s): the guard a client would give up at.
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Post(ts.URL+"/v1/sessions/other/steps", "application/json", strings.NewReader(`{"state":"`+strings.Repeat("y", 16<<10)+`"}`))
	if err != nil {
		t.Fatalf("a commit to another session beside a stalled upload: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("a commit to another session beside a stalled upload: %s", resp.Status)
	}
	r, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the stalled upload got no answer: %v", err)
	}
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "stopped arriving") {
		t.Fatalf("the stalled upload: %d %s; want 408 saying it stopped arriving", r.StatusCode, b)
	}
}
