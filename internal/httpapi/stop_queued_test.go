package httpapi

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
)

// TestStopEndsPollQueuedForARead: a long-poll whose step came while
// every read slot was taken queued for one without watching the stop:
// Serve's stop left it waiting for the whole grace, then cut it off
// unanswered, and said so. It ends at the stop now, 204 as every other
// long-poll then.
func TestStopEndsPollQueuedForARead(t *testing.T) {
	srv := New(cairn.OpenStore(memStore()), Options{MaxReads: 1})
	addr, stop, served := serveLoopback(t, srv)
	defer stop()
	base := "http://" + addr
	post := func() {
		resp, err := http.Post(base+"/v1/sessions/q/steps", "application/json", strings.NewReader(`{"state":{"n":1}}`))
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("commit: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	post()
	srv.reads <- struct{}{} // every read slot taken, by a read that does not end
	status := make(chan int, 1)
	go func() { status <- getStatus(http.DefaultClient, base+"/v1/sessions/q/wait?after=1&timeout=60") }()
	settled(t, "the long-poll did not start", func() bool { return len(srv.waiters) == 1 })
	post() // its step: the long-poll queues for the read slot
	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return")
	}
	if got := <-status; got != http.StatusNoContent {
		t.Fatalf("the queued long-poll at the stop: %d, want 204", got)
	}
}
