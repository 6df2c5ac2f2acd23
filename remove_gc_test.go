package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
)

// gcAfterBase runs a GC through its own workspace right after the first
// step object of a session named tmp is written: Remove's tombstone,
// before it raises the base. The GC that runs back to back beside a
// Remove.
type gcAfterBase struct {
	cas.Store
	gc   func() error
	done bool
	err  error
}

func (s *gcAfterBase) Put(ctx context.Context, key string, data []byte, o cas.PutOptions) error {
	if err := s.Store.Put(ctx, key, data, o); err != nil {
		return err
	}
	if !s.done && strings.HasPrefix(key, "steps/tmp/") && !strings.HasSuffix(key, "/base") {
		s.done = true
		s.err = s.gc()
	}
	return nil
}

// TestRemoveBesideGC: a GC that runs between Remove's tombstone (in the
// slot above the head) and its raising of the base sees a session headed
// by a tombstone whose base was never raised, raises it itself, and
// deletes nothing yet; Remove must still succeed. TestGCConcurrentFS
// hit a race of this kind now and then.
func TestRemoveBesideGC(t *testing.T) {
	ctx := context.Background()
	backend := mem.New()
	ws := cairn.OpenStore(backend)
	s, _ := ws.Session("tmp")
	for n := 1; n <= 3; n++ {
		if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":`+string(rune('0'+n))+`}`)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	hooked := &gcAfterBase{Store: backend}
	hooked.gc = func() error {
		rep, err := cairn.OpenStore(backend).GC(ctx, cairn.GCOptions{Grace: 0})
		if err == nil && (rep.Tombstones != 0 || rep.Deleted != 0) {
			t.Errorf("gc beside a removal fenced or deleted: %+v", rep)
		}
		return err
	}
	res, err := cairn.OpenStore(hooked).Remove(ctx, "tmp")
	if hooked.err != nil {
		t.Fatalf("gc: %v", hooked.err)
	}
	if !hooked.done {
		t.Fatal("remove wrote no tombstone")
	}
	if err != nil {
		t.Fatalf("remove with gc beside it: %v", err)
	}
	if res.Steps != 3 {
		t.Errorf("removed %d steps, want 3", res.Steps)
	}
	if _, err := s.Head(ctx); !errors.Is(err, cairn.ErrNotFound) {
		t.Errorf("head of the removed session: %v, want not found", err)
	}
}
