package httpapi

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
)

// lostAnswer writes the Put of key, then, instead of answering, waits
// for the Put's context to end and fails with its error: a write that
// landed while its caller went away.
type lostAnswer struct {
	cas.Store
	key    string
	once   sync.Once
	landed chan struct{}
}

func (s *lostAnswer) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	err := s.Store.Put(ctx, key, data, opts)
	if key == s.key && err == nil {
		first := false
		s.once.Do(func() { first = true })
		if first {
			close(s.landed)
			<-ctx.Done()
			return ctx.Err()
		}
	}
	return err
}

// TestDisconnectedCommitRetried: a client that goes away while its
// commit's step is being written, and whose write lands all the same,
// gets that step back when it retries with the same Idempotency-Key:
// 201, replayed, and the session holds the step once.
func TestDisconnectedCommitRetried(t *testing.T) {
	store := &lostAnswer{Store: memStore(), key: "steps/d/00000000000000000001", landed: make(chan struct{})}
	ws := cairn.OpenStore(store)
	srv := New(ws, Options{})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	body := `{"state":{"n":1}}`
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /v1/sessions/d/steps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nIdempotency-Key: k1\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	select {
	case <-store.landed:
	case <-time.After(30 * time.Second):
		t.Fatal("the commit did not reach the store")
	}
	conn.Close()
	settled(t, "the commit of a client gone did not end", func() bool { return srv.inFlight.Load() == 0 })
	req, _ := http.NewRequest("POST", ts.URL+"/v1/sessions/d/steps", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "k1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf)
	resp.Body.Close()
	s, _ := ws.Session("d")
	head, err := s.Head(t.Context())
	if resp.StatusCode != http.StatusCreated || resp.Header.Get(replayedHeader) != "true" || head == nil || head.Number != 1 {
		t.Fatalf("retry of a commit that landed while its client went away: %s %s (head %v %v); want 201 replayed, one step", resp.Status, buf[:n], head, err)
	}
}
