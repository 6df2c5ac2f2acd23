package cairn_test

import (
	"context"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
)

// closingStore is a store that counts its Close calls.
type closingStore struct {
	cas.Store
	closed atomic.Int32
}

func (s *closingStore) Close() error { s.closed.Add(1); return nil }

var (
	closingOnce   sync.Once
	closingStores = make(chan *closingStore, 16)
)

// TestCloseClosesTheBackend: Close releases the store a workspace
// opened (a backend that is an io.Closer, as one holding connections
// is), once however often Close is called; a store given to OpenStore
// is its caller's, and stays open.
func TestCloseClosesTheBackend(t *testing.T) {
	ctx := context.Background()
	closingOnce.Do(func() {
		cas.Register("closetest", cas.Backend{Open: func(context.Context, *url.URL) (cas.Store, error) {
			s := &closingStore{Store: mem.New()}
			closingStores <- s
			return s, nil
		}})
	})
	ws, err := cairn.Open(ctx, "closetest://x")
	if err != nil {
		t.Fatal(err)
	}
	backend := <-closingStores
	s, _ := ws.Session("s")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":1}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if backend.closed.Load() != 0 {
		t.Fatal("the backend was closed before Close")
	}
	ws.Close()
	ws.Close()
	if n := backend.closed.Load(); n != 1 {
		t.Fatalf("the backend was closed %d times by two Closes; want once", n)
	}
	own := &closingStore{Store: mem.New()}
	cairn.OpenStore(own).Close()
	if own.closed.Load() != 0 {
		t.Fatal("Close closed a store given to OpenStore, which its caller owns")
	}
}
