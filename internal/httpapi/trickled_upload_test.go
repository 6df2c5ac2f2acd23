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

// TestTrickledUploadsLetOthersCommit: a client that sent part of a body
// and then a byte now and then, never pausing for StallTimeout, held its
// bytes of the bodies' budget until BodyTimeout: every commit beside it,
// to any session, waited that long, and such clients starting again kept
// every other commit waiting for ever. A body that others wait for must
// now keep to the pace that brings MaxBody in BodyTimeout (with
// StallTimeout to spare), else 408, however much of it is still to
// come, and the commits waiting go on.
func TestTrickledUploadsLetOthersCommit(t *testing.T) {
	const maxBody = 64 << 10
	for _, tc := range []struct {
		name  string
		sends []int // how much of a body of maxBody each trickler sends at once
	}{
		{"one that sent all but 90 bytes", []int{maxBody - 100}},
		{"two that sent part of theirs", []int{40 << 10, 24<<10 - 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := New(cairn.OpenStore(memStore()), Options{MaxBody: maxBody,
				StallTimeout: 2 * time.Second, BodyTimeout: 10 * time.Minute})
			ts := httptest.NewServer(srv)
			t.Cleanup(ts.Close)
			var conns []net.Conn
			for i, n := range tc.sends {
				conns = append(conns, startUpload(t, ts, fmt.Sprintf("trickle%d", i), fmt.Sprintf("Content-Length: %d", maxBody), `{"state":"`+strings.Repeat("x", n-10)))
				settled(t, "a trickled upload did not take its bytes", func() bool { return bodiesArriving(srv) == i+1 })
			}
			stop := make(chan struct{})
			trickled := make(chan struct{})
			go func() {
				defer close(trickled)
				for {
					for _, c := range conns {
						c.Write([]byte("x")) // well within StallTimeout, for ever
					}
					select {
					case <-stop:
						return
					case <-time.After(time.Second):
					}
				}
			}()
			defer func() { close(stop); <-trickled }()
			settled(t, "the trickled uploads did not fill the budget", func() bool { return bodiesFree(srv) < 1<<10 })
			commitBeside(t, ts, "trickled uploads")
			for i, conn := range conns {
				if code, b := uploadAnswer(t, conn); code != http.StatusRequestTimeout || !strings.Contains(b, "waited") {
					t.Errorf("trickled upload %d: %d %s; want 408 saying others waited for it", i, code, b)
				}
			}
		})
	}
}

// TestSteadyUploadsBesideOthersWaiting: large bodies that keep to the
// pace the server asks of the largest (MaxBody in BodyTimeout) are not
// cut off when others wait for the room they hold, though they take
// longer than StallTimeout to arrive in full: all commit.
func TestSteadyUploadsBesideOthersWaiting(t *testing.T) {
	const maxBody = 1 << 20
	srv := New(cairn.OpenStore(memStore()), Options{MaxBody: maxBody,
		StallTimeout: 2 * time.Second, BodyTimeout: 32 * time.Second}) // a pace of 32 KiB a second
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	body := `{"state":"` + strings.Repeat("x", maxBody-12) + `"}`

	// Two uploads fill the budget at once, then send the rest at 160 KiB
	// a second: five times the pace asked, but for longer than
	// StallTimeout.
	steady := func(session string, first int) (status chan int) {
		status = make(chan int, 1)
		conn := startUpload(t, ts, session, fmt.Sprintf("Content-Length: %d", len(body)), body[:first])
		go func() {
			for rest := body[first:]; len(rest) > 0; {
				time.Sleep(100 * time.Millisecond)
				n := min(len(rest), 16<<10)
				conn.Write([]byte(rest[:n]))
				rest = rest[n:]
			}
			r, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Errorf("upload to %s: %v", session, err)
				status <- 0
				return
			}
			b, _ := io.ReadAll(r.Body)
			if r.StatusCode != http.StatusCreated {
				t.Errorf("a steady upload to %s others waited for: %d %s; want 201", session, r.StatusCode, b)
			}
			status <- r.StatusCode
		}()
		return status
	}
	a := steady("a", 384<<10)
	settled(t, "the first upload did not take its bytes", func() bool { return bodiesFree(srv) <= 640<<10+16<<10 })
	b := steady("b", 634<<10)
	settled(t, "the uploads did not fill the budget", func() bool { return bodiesFree(srv) < 16<<10 })
	// A commit that does not fit beside them, and waits.
	resp, err := http.Post(ts.URL+"/v1/sessions/other/steps", "application/json", strings.NewReader(`{"state":"`+strings.Repeat("y", 16<<10)+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("a commit beside steady uploads: %s", resp.Status)
	}
	<-a
	<-b
}
