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
// base marker is written: the GC that runs back to back beside a Remove.
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
	if !s.done && strings.HasPrefix(key, "steps/") && strings.HasSuffix(key, "/base") {
		s.done = true
		s.err = s.gc()
	}
	return nil
}

// TestRemoveBesideGC: a GC that fences a removed session (a tombstone
// in the slot above its head) between Remove's base marker and its
// check for late writers is the removal taking effect; Remove must not
// report it as "a writer committed meanwhile". TestGCConcurrentFS hit
// this now and then.
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
		if err == nil && rep.Tombstones == 0 {
			t.Errorf("gc wrote no tombstone for the removed session: the test no longer races what it means to")
		}
		return err
	}
	res, err := cairn.OpenStore(hooked).Remove(ctx, "tmp")
	if hooked.err != nil {
		t.Fatalf("gc: %v", hooked.err)
	}
	if !hooked.done {
		t.Fatal("remove wrote no base marker")
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
