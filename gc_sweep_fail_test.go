package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// failNth fails the nth call (from 1) of Delete, or of Put to key.
type failNth struct {
	cas.Store
	mu            sync.Mutex
	deletes, puts int
	failDelete    int
	failPut       int
	putKey        string
}

var errFailNth = errors.New("injected failure")

func (f *failNth) Delete(ctx context.Context, key string) error {
	f.mu.Lock()
	f.deletes++
	fail := f.deletes == f.failDelete
	f.mu.Unlock()
	if fail {
		return errFailNth
	}
	return f.Store.Delete(ctx, key)
}

func (f *failNth) Put(ctx context.Context, key string, data []byte, o cas.PutOptions) error {
	if key == f.putKey {
		f.mu.Lock()
		f.puts++
		fail := f.puts == f.failPut
		f.mu.Unlock()
		if fail {
			return errFailNth
		}
	}
	return f.Store.Put(ctx, key, data, o)
}

// TestGCSweepFailsPartWay: a run whose sweep fails part way (the third
// delete, or the write of the gc state after every delete) returns its
// error with a report of exactly what it deleted, deletes nothing
// reachable, and the next run completes. It used to return no report:
// a caller saw a failed run, and objects gone that no report named.
func TestGCSweepFailsPartWay(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    *failNth
	}{
		{"third delete", &failNth{failDelete: 3}},
		{"gc state write", &failNth{failPut: 2, putKey: manifest.GCStateKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			backend := mem.New()
			gcGarbage(t, backend)
			f := tc.f
			f.Store = backend
			ws := cairn.OpenStore(f)
			first := mustGC(t, ws, cairn.GCOptions{Grace: time.Minute, Now: slotsAged})
			before := dataKeys(t, backend)
			rep, err := ws.GC(ctx, cairn.GCOptions{Grace: time.Minute, Now: slotsAged.Add(time.Hour)})
			if !errors.Is(err, errFailNth) {
				t.Fatalf("gc: %v, want the injected failure", err)
			}
			if rep == nil {
				t.Fatalf("gc failed part way with no report: %v", err)
			}
			t.Logf("gc: %v; report: %d deleted, %d candidates, %v", err, rep.Deleted, rep.Candidates, rep.DeletedKeys)
			after := dataKeys(t, backend)
			gone := map[string]bool{}
			for _, k := range before {
				gone[k] = true
			}
			for _, k := range after {
				delete(gone, k)
			}
			if rep.Deleted != len(gone) || len(rep.DeletedKeys) != len(gone) {
				t.Fatalf("report says %d deleted (%v), the store lost %d: %v", rep.Deleted, rep.DeletedKeys, len(gone), gone)
			}
			for _, k := range rep.DeletedKeys {
				if !gone[k] {
					t.Errorf("report names %s deleted; it is still there", k)
				}
			}
			if rep.Deleted+rep.Candidates != first.Candidates {
				t.Errorf("deleted %d + candidates %d, want the first run's %d candidates", rep.Deleted, rep.Candidates, first.Candidates)
			}
			if want := fmt.Sprintf("%d objects", rep.Deleted); rep.Deleted > 0 && !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %s were deleted", err, want)
			}
			verifyClean(t, ws)
			next, err := ws.GC(ctx, cairn.GCOptions{Grace: time.Minute, Now: slotsAged.Add(2 * time.Hour)})
			if err != nil {
				t.Fatalf("next run: %v", err)
			}
			if next.Candidates != 0 || next.Deleted != first.Candidates-rep.Deleted {
				t.Errorf("next run: %+v, want the %d left deleted", next, first.Candidates-rep.Deleted)
			}
			verifyClean(t, ws)
		})
	}
}
