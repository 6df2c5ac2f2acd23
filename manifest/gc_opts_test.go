package manifest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestGCNowOutOfRange: Repo.GC refuses a GCOptions.Now that the gc state
// cannot record before it writes or deletes anything (not even gc/clock
// or gc/state); it used to fail only when it encoded the state, after
// the sweep.
func TestGCNowOutOfRange(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	r := NewRepo(store, 0)
	for _, now := range []time.Time{
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		rep, err := r.GC(ctx, GCOptions{Now: now})
		if !errors.Is(err, ErrInvalidGCOptions) || rep != nil {
			t.Errorf("gc at %v: %+v, %v; want ErrInvalidGCOptions and no report", now, rep, err)
		}
	}
	n := 0
	if err := store.List(ctx, "", "", func(cas.Info) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("refused runs left %d objects", n)
	}
	if !GCTimeOK(time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)) || !GCTimeOK(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Error("GCTimeOK refuses a time the gc state records")
	}
}
