package httpapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
)

// TestSessionTableBounded: the server's table of sessions holds those in
// use and at most IdleSessions more, whatever the number of names asked.
func TestSessionTableBounded(t *testing.T) {
	srv := New(cairn.OpenStore(memStore()), Options{IdleSessions: 16})
	for i := range 2000 {
		get(srv, fmt.Sprintf("/v1/sessions/n%d/head", i))
		if n := srv.sessions.size(); n > 16 {
			t.Fatalf("after %d distinct names the server holds %d sessions, want at most 16", i+1, n)
		}
	}
	if n := srv.sessions.size(); n != 16 {
		t.Fatalf("the server keeps %d idle sessions, want 16", n)
	}
}

// TestWaitersSharePoller (issue 13 item 10): idle long-polls on one
// session share one poller, whose reads of the store back off from
// PollInterval to MaxPollInterval; a step written by another process
// wakes them all and resets the interval.
func TestWaitersSharePoller(t *testing.T) {
	store := memStore()
	ws := cairn.OpenStore(store)
	other := cairn.OpenStore(store) // another process writing to the same store
	srv := New(ws, Options{PollInterval: 200 * time.Millisecond, MaxPollInterval: 3200 * time.Millisecond})
	// The poller sleeps on this fake clock: it reports each interval it
	// asks for and wakes when the test ticks.
	asked := make(chan time.Duration)
	tick := make(chan time.Time)
	srv.sessions.sleep = func(d time.Duration) <-chan time.Time {
		asked <- d
		return tick
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	ow, _ := other.Session("w")
	if _, err := ow.Commit(t.Context(), cairn.JSON([]byte(`{"n":1}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}

	const waiters = 50
	var wg sync.WaitGroup
	answers := make(chan string, waiters)
	for range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(ts.URL + "/v1/sessions/w/wait?after=1&timeout=60")
			if err != nil {
				answers <- err.Error()
				return
			}
			defer resp.Body.Close()
			var b strings.Builder
			fmt.Fprint(&b, resp.StatusCode, " ")
			buf := make([]byte, 4096)
			n, _ := resp.Body.Read(buf)
			b.Write(buf[:n])
			answers <- b.String()
		}()
	}
	// The poller starts with the first waiter: its first sleep.
	if d := <-asked; d != 200*time.Millisecond {
		t.Fatalf("first poll interval %v, want 200ms", d)
	}
	for {
		srv.sessions.mu.Lock()
		e := srv.sessions.entries["w"]
		n := 0
		if e != nil {
			n = e.waiters
		}
		srv.sessions.mu.Unlock()
		if n == waiters {
			break
		}
		runtime.Gosched()
	}

	before := ws.Requests()
	const polls = 6
	var intervals []time.Duration
	for range polls {
		tick <- time.Time{}
		intervals = append(intervals, <-asked) // the poll is done when it sleeps again
	}
	used := ws.Requests().Sub(before)
	perPoll := float64(used.Get+used.List+used.Head) / polls
	t.Logf("%d idle waiters, %d polls: %d GET, %d LIST, %d HEAD (%.1f requests a poll); intervals %v",
		waiters, polls, used.Get, used.List, used.Head, perPoll, intervals)
	if perPoll > 3 {
		t.Fatalf("%d idle waiters cost %.1f store requests a poll; want one head read (at most 3 requests)", waiters, perPoll)
	}
	want := []time.Duration{400, 800, 1600, 3200, 3200, 3200}
	for i := range want {
		if intervals[i] != want[i]*time.Millisecond {
			t.Fatalf("poll intervals %v, want 400ms doubling up to 3.2s", intervals)
		}
	}

	// Another process commits; the next poll finds it and wakes everyone.
	if _, err := ow.Commit(t.Context(), cairn.JSON([]byte(`{"n":2}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	tick <- time.Time{}
	if d := <-asked; d != 200*time.Millisecond {
		t.Fatalf("interval after news %v, want 200ms again", d)
	}
	go func() {
		// The poller may sleep again before the last waiter leaves.
		for range asked {
		}
	}()
	wg.Wait()
	close(answers)
	for a := range answers {
		if !strings.HasPrefix(a, "200 ") || !strings.Contains(a, `"step":2`) {
			t.Fatalf("waiter answered %q, want 200 with step 2", a)
		}
	}
	if n := srv.sessions.size(); n != 1 {
		t.Fatalf("table holds %d entries, want the one idle session", n)
	}
}

// TestWaitCap: long-polls beyond MaxWaiters are refused with 503 and
// Retry-After instead of piling up.
func TestWaitCap(t *testing.T) {
	c, srv := newChecker(t, Options{MaxWaiters: 2})
	c.do("POST", "/v1/sessions/w/steps", `{"state":{}}`, 201)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.do("GET", "/v1/sessions/w/wait?after=1&timeout=60", "", 200)
		}()
	}
	for len(srv.waiters) < 2 {
		runtime.Gosched()
	}
	status, b, hdr := c.send("GET", "/v1/sessions/other/wait?after=0&timeout=60", "", http.Header{}, "")
	if status != 503 || hdr.Get("Retry-After") == "" {
		t.Fatalf("a third long-poll: %d %s (Retry-After %q); want 503 with Retry-After", status, b, hdr.Get("Retry-After"))
	}
	c.check("GET", "/v1/sessions/other/wait", status, b)
	c.do("POST", "/v1/sessions/w/steps", `{"state":{"n":2}}`, 201) // wakes both
	wg.Wait()
	c.do("GET", "/v1/sessions/other/wait?after=0&timeout=0", "", 204)
}

// TestReadCap: reads of states beyond MaxReads at once get 503 with
// Retry-After; the next read after them works.
func TestReadCap(t *testing.T) {
	c, srv := newChecker(t, Options{MaxReads: 1})
	c.do("POST", "/v1/sessions/r/steps", `{"state":{"a":1}}`, 201)
	srv.reads <- struct{}{} // a read in progress
	for _, path := range []string{"/v1/sessions/r/head", "/v1/sessions/r/steps/1", "/v1/sessions/r/log", "/v1/diff?a=r&b=r", "/v1/sessions", "/v1/inbox"} {
		status, b, hdr := c.send("GET", path, "", http.Header{}, "")
		if status != 503 || hdr.Get("Retry-After") == "" {
			t.Fatalf("GET %s while at the read limit: %d %s", path, status, b)
		}
		c.check("GET", path, status, b)
	}
	c.do("GET", "/v1/sessions/r/head?state=false", "", 200) // no state: no slot needed
	<-srv.reads
	c.do("GET", "/v1/sessions/r/head", "", 200)
}
