package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
)

// TestCommitsToOtherSessionsNotSerialised: a commit held in the store
// (a stalled write of one session) holds that session only: commits to
// other sessions complete beside it.
func TestCommitsToOtherSessionsNotSerialised(t *testing.T) {
	store := newHeldPuts("steps/slow/", false)
	ts := httptest.NewServer(New(cairn.OpenStore(store), Options{}))
	release := store.release
	t.Cleanup(ts.Close)
	t.Cleanup(release) // before ts.Close, which waits for the held commit
	slow := make(chan int, 1)
	go func() {
		resp, err := http.Post(ts.URL+"/v1/sessions/slow/steps", "application/json", strings.NewReader(`{"state":{"n":1}}`))
		if err != nil {
			slow <- 0
			return
		}
		resp.Body.Close()
		slow <- resp.StatusCode
	}()
	select {
	case <-store.held:
	case <-time.After(30 * time.Second):
		t.Fatal("the slow commit did not reach the store")
	}
	for i := range 5 {
		resp, err := http.Post(ts.URL+fmt.Sprintf("/v1/sessions/fast%d/steps", i), "application/json", strings.NewReader(`{"state":{"n":1}}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("a commit to another session beside a stalled one: %s", resp.Status)
		}
	}
	// A read of the stalled session's own head waits for it; one of
	// another session does not.
	resp, err := http.Get(ts.URL + "/v1/sessions/fast0/head")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("head of another session beside a stalled commit: %v %v", resp, err)
	}
	resp.Body.Close()
	release()
	if got := <-slow; got != http.StatusCreated {
		t.Fatalf("the stalled commit once released: %d", got)
	}
}

// TestConcurrentCommitsOneSession: many clients committing to one
// session at once: without expect every commit lands once, in its own
// step; with the same expect exactly one wins and the others get 409
// with the head they lost to.
func TestConcurrentCommitsOneSession(t *testing.T) {
	ws := cairn.OpenStore(memStore())
	ts := httptest.NewServer(New(ws, Options{}))
	t.Cleanup(ts.Close)
	const n = 40
	post := func(session, body string) (int, map[string]any) {
		resp, err := http.Post(ts.URL+"/v1/sessions/"+session+"/steps", "application/json", strings.NewReader(body))
		if err != nil {
			t.Error(err)
			return 0, nil
		}
		defer resp.Body.Close()
		var v map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&v)
		return resp.StatusCode, v
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if status, v := post("free", fmt.Sprintf(`{"state":{"i":%d},"record":{"i":%d}}`, i, i)); status != http.StatusCreated {
				t.Errorf("commit %d without expect: %d %v", i, status, v)
			}
		})
	}
	wg.Wait()
	s, _ := ws.Session("free")
	head, err := s.Head(t.Context())
	if err != nil || head.Number != n {
		t.Fatalf("head after %d commits: %v %v", n, head, err)
	}
	seen := map[string]bool{}
	if err := head.Log(t.Context(), func(st *cairn.Step) error {
		seen[string(st.Record)] = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != n {
		t.Fatalf("%d distinct records in %d steps, want each commit once", len(seen), n)
	}

	var mu sync.Mutex
	wins, conflicts := 0, 0
	for i := range n {
		wg.Go(func() {
			status, v := post("race", fmt.Sprintf(`{"state":{"i":%d},"expect":0}`, i))
			mu.Lock()
			defer mu.Unlock()
			switch status {
			case http.StatusCreated:
				wins++
			case http.StatusConflict:
				conflicts++
				if h, ok := v["head"].(float64); !ok || h != 1 {
					t.Errorf("a 409 with head %v, want 1: %v", v["head"], v)
				}
			default:
				t.Errorf("commit %d with expect 0: %d %v", i, status, v)
			}
		})
	}
	wg.Wait()
	if wins != 1 || conflicts != n-1 {
		t.Fatalf("%d won and %d lost slot 1, want 1 and %d", wins, conflicts, n-1)
	}
}

// fds returns the number of open file descriptors of this process, or
// -1 where it cannot tell.
func fds() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// settled waits until cond holds, up to a generous deadline.
func settled(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s", what)
		}
	}
}

// TestManyPollsDisconnect: hundreds of long-polls held at once, whose
// clients then go away mid-poll, leave no goroutine, file descriptor or
// session of theirs behind.
func TestManyPollsDisconnect(t *testing.T) {
	srv := New(cairn.OpenStore(memStore()), Options{})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	addr := ts.Listener.Addr().String()
	runtime.GC()
	goBefore, fdBefore := runtime.NumGoroutine(), fds()
	const n = 300
	conns := make([]net.Conn, 0, n)
	for i := range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "GET /v1/sessions/p%d/wait?after=0&timeout=60 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", i%10)
	}
	settled(t, "the long-polls did not all start", func() bool { return len(srv.waiters) == n })
	for _, c := range conns {
		c.Close()
	}
	settled(t, "the long-polls of clients gone did not end", func() bool { return len(srv.waiters) == 0 })
	ts.CloseClientConnections()
	settled(t, fmt.Sprintf("goroutines stay above %d after the polls ended", goBefore+5), func() bool {
		return runtime.NumGoroutine() <= goBefore+5
	})
	if fdBefore >= 0 {
		settled(t, fmt.Sprintf("fds stay above %d after the polls ended", fdBefore), func() bool { return fds() <= fdBefore })
	}
	srv.sessions.mu.Lock()
	for name, e := range srv.sessions.entries {
		if e.refs != 0 || e.waiters != 0 || e.stop != nil {
			t.Errorf("session %s still has %d refs, %d waiters, poller %v", name, e.refs, e.waiters, e.stop != nil)
		}
	}
	srv.sessions.mu.Unlock()
}

// TestShutdownEndsManyPolls: a stop with hundreds of long-polls held ends
// them all at once with 204, and a commit answered before it is kept.
func TestShutdownEndsManyPolls(t *testing.T) {
	srv := New(cairn.OpenStore(memStore()), Options{})
	addr, stop, served := serveLoopback(t, srv)
	defer stop()
	base := "http://" + addr
	resp, err := http.Post(base+"/v1/sessions/s/steps", "application/json", strings.NewReader(`{"state":{"n":1}}`))
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("commit: %v %v", resp, err)
	}
	resp.Body.Close()
	const n = 200
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: n}}
	statuses := make(chan int, n)
	for range n {
		go func() { statuses <- getStatus(client, base+"/v1/sessions/s/wait?after=1&timeout=60") }()
	}
	settled(t, "the long-polls did not all start", func() bool { return len(srv.waiters) == n })
	stop()
	for range n {
		select {
		case s := <-statuses:
			if s != http.StatusNoContent {
				t.Fatalf("a long-poll at shutdown: %d, want 204", s)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("long-polls held past the stop")
		}
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return")
	}
}

// TestSameKeyRetriesRace: retries of one commit, with one Idempotency-Key,
// racing each other through two servers over one store (a flaky network
// resending to two replicas) write one step; every one of them is
// answered 201 with that step, all but one replayed.
func TestSameKeyRetriesRace(t *testing.T) {
	store := memStore()
	var servers [2]*httptest.Server
	for i := range servers {
		servers[i] = httptest.NewServer(New(cairn.OpenStore(store), Options{}))
		t.Cleanup(servers[i].Close)
	}
	const n = 30
	type answer struct {
		status   int
		id       string
		step     float64
		replayed bool
	}
	answers := make(chan answer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", servers[i%2].URL+"/v1/sessions/k/steps", strings.NewReader(`{"state":{"n":1},"record":{"r":1}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "once")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var v map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&v)
			id, _ := v["id"].(string)
			step, _ := v["step"].(float64)
			answers <- answer{resp.StatusCode, id, step, resp.Header.Get(replayedHeader) == "true"}
		})
	}
	wg.Wait()
	close(answers)
	fresh, ids := 0, map[string]bool{}
	for a := range answers {
		if a.status != http.StatusCreated || a.step != 1 {
			t.Errorf("a retry: %+v; want 201 with step 1", a)
		}
		if !a.replayed {
			fresh++
		}
		ids[a.id] = true
	}
	if fresh != 1 || len(ids) != 1 {
		t.Fatalf("%d answers not replayed and %d distinct steps; want one of each", fresh, len(ids))
	}
	s, _ := cairn.OpenStore(store).Session("k")
	if head, err := s.Head(t.Context()); err != nil || head.Number != 1 {
		t.Fatalf("head after the retries: %v %v; want step 1", head, err)
	}
}

// TestStalledUploadHoldsNoSession: a commit whose body stalls half sent
// holds nothing of its session: another client's commit to the same
// session lands beside it.
func TestStalledUploadHoldsNoSession(t *testing.T) {
	srv := New(cairn.OpenStore(memStore()), Options{})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /v1/sessions/a/steps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"state\":")
	settled(t, "the stalled upload did not reach the server", func() bool { return srv.inFlight.Load() == 1 })
	resp, err := http.Post(ts.URL+"/v1/sessions/a/steps", "application/json", strings.NewReader(`{"state":{"n":1},"expect":0}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("a commit beside a stalled upload to the same session: %s", resp.Status)
	}
}

// getStatus GETs url through client and returns the answer's status once
// its body is read, or 0 if the request failed.
func getStatus(client *http.Client, url string) int {
	resp, err := client.Get(url)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
