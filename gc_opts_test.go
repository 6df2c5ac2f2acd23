package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
)

// gcGarbage returns a workspace on backend whose session "a" has 5
// steps, pruned to its last: 4 unreachable step objects (packs too,
// as the layout keeps them). "b" is a live session beside it.
func gcGarbage(t *testing.T, backend cas.Store) *cairn.Workspace {
	t.Helper()
	ctx := context.Background()
	ws := cairn.OpenStore(backend)
	for _, name := range []string{"a", "b"} {
		s, err := ws.Session(name)
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < 5; n++ {
			if _, err := s.Commit(ctx, cairn.JSON([]byte(fmt.Sprintf(`{"%s":%d}`, name, n))), cairn.CommitOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := ws.Prune(ctx, "a", 1); err != nil {
		t.Fatal(err)
	}
	return ws
}

// dataKeys lists the step objects and packs in backend.
func dataKeys(t *testing.T, backend cas.Store) []string {
	t.Helper()
	var keys []string
	err := backend.List(context.Background(), "", "", func(i cas.Info) error {
		if strings.HasPrefix(i.Key, "steps/") && !strings.HasSuffix(i.Key, "/base") && !strings.HasSuffix(i.Key, "/session") || strings.HasPrefix(i.Key, "packs/") {
			keys = append(keys, i.Key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	return keys
}

// verifyClean checks that every live step is whole.
func verifyClean(t *testing.T, ws *cairn.Workspace) {
	t.Helper()
	rep, err := ws.Verify(context.Background())
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if len(rep.Problems) > 0 || rep.Steps != 6 {
		t.Fatalf("verify after gc: %d steps, problems %+v; want 6 steps, none", rep.Steps, rep.Problems)
	}
}

// TestGCNowOutOfRange: a GCOptions.Now the gc state cannot record (after
// year 9999, before year 1) is ErrInvalid naming the field, before the
// run deletes anything. It used to be found only when the state was
// encoded, after the sweep had deleted the candidates that were due:
// the run failed with "encode gc state: … year outside of range", its
// report lost, and the objects gone.
func TestGCNowOutOfRange(t *testing.T) {
	ctx := context.Background()
	backend := mem.New()
	ws := gcGarbage(t, backend)
	if rep := mustGC(t, ws, cairn.GCOptions{Grace: time.Minute, Now: slotsAged}); rep.Candidates == 0 {
		t.Fatalf("first run found no candidates: %+v", rep)
	}
	before := dataKeys(t, backend)
	for _, now := range []time.Time{
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC),
		time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		for _, dry := range []bool{false, true} {
			rep, err := ws.GC(ctx, cairn.GCOptions{Grace: time.Minute, Now: now, DryRun: dry})
			if !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(fmt.Sprint(err), "GCOptions.Now") {
				t.Errorf("gc at %v (dry run %v): %v, want ErrInvalid naming GCOptions.Now", now, dry, err)
			}
			if rep != nil {
				t.Errorf("gc at %v: report %+v with the refusal", now, rep)
			}
			if after := dataKeys(t, backend); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("gc at %v refused but deleted %d objects", now, len(before)-len(after))
			}
		}
	}
	// The next run goes on from the first run's state.
	rep := mustGC(t, ws, cairn.GCOptions{Grace: time.Minute, Now: slotsAged.Add(time.Hour)})
	if rep.Deleted == 0 || rep.Candidates != 0 || len(dataKeys(t, backend)) != len(before)-rep.Deleted {
		t.Errorf("run after the refusals: %+v, %d objects left of %d", rep, len(dataKeys(t, backend)), len(before))
	}
	verifyClean(t, ws)
}
