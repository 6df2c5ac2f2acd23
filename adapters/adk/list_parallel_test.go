package adk

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"google.golang.org/adk/session"
)

// slowStore is an object store whose reads take a round trip's time, and
// which counts how many are in flight at most.
type slowStore struct {
	cas.Store
	inFlight, most atomic.Int64
}

func (s *slowStore) Get(ctx context.Context, key string, off, n int64) ([]byte, error) {
	cur := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		m := s.most.Load()
		if cur <= m || s.most.CompareAndSwap(m, cur) {
			break
		}
	}
	time.Sleep(5 * time.Millisecond)
	return s.Store.Get(ctx, key, off, n)
}

// TestListReadsSessionsConcurrently: List of an app with many sessions
// reads their heads several at a time (a bounded number), not one round
// trip after another, and still returns every session once.
func TestListReadsSessionsConcurrently(t *testing.T) {
	ctx := context.Background()
	store := &slowStore{Store: mem.New()}
	ws := cairn.OpenStore(store)
	defer ws.Close()
	s := New(ws)
	const n = 40
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if _, err := s.Create(ctx, &session.CreateRequest{AppName: "app", UserID: fmt.Sprint("u", i%3), SessionID: fmt.Sprint("s", i)}); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	store.most.Store(0)
	l, err := New(ws).List(ctx, &session.ListRequest{AppName: "app"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, sess := range l.Sessions {
		if seen[sess.ID()] {
			t.Fatalf("session %q listed twice", sess.ID())
		}
		seen[sess.ID()] = true
	}
	if len(seen) != n {
		t.Fatalf("List = %d sessions, want %d", len(seen), n)
	}
	if most := store.most.Load(); most < 2 || most > listReaders {
		t.Fatalf("at most %d reads in flight during List, want 2..%d", most, listReaders)
	}
}
