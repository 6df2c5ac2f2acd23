package cairn_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestGCLegacyRemovalCollectable: a session removed by an older cairn
// (its base marker exactly one above its newest step, no tombstone) is
// still fenced and swept.
func TestGCLegacyRemovalCollectable(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	commitN(t, ws, "k", "k", 1, 2)
	commitN(t, ws, "r", "r", 1, 4)
	if err := manifest.NewRepo(store, 0).WriteBase(ctx, "r", 5); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, ws)
	if r := mustGC(t, ws, cairn.GCOptions{Grace: 0}); r.Tombstones != 1 || r.Candidates != 4 || r.Note != "" {
		t.Fatalf("run 1 = %+v, want r fenced and its 4 steps candidates", r)
	}
	if r := mustGC(t, ws, cairn.GCOptions{Grace: 0}); r.Deleted != 4 {
		t.Fatalf("run 2 = %+v, want r's 4 steps deleted", r)
	}
	mustVerify(t, ws)
	checkState(t, ws, "k", gcState("k", 2))
}

// TestGCPruneAfterListing: gc lists a session's steps; before it reads
// the session's base, a writer commits more steps and prunes the
// session above the listed head. The session is alive: gc neither fences
// it nor calls it removed, and goes on with the rest of its work.
func TestGCPruneAfterListing(t *testing.T) {
	for _, keep := range []uint64{2, 3, 4} { // base head+2, head+1, head
		t.Run(strconv.FormatUint(keep, 10), func(t *testing.T) { gcPruneAfterListing(t, keep) })
	}
}

func gcPruneAfterListing(t *testing.T, keep uint64) {
	ctx := context.Background()
	{
		store := mem.New()
		ws := cairn.OpenStore(store)
		commitN(t, ws, "p", "p", 1, 4)
		commitN(t, ws, "g", "g", 1, 3)
		if _, err := ws.Remove(ctx, "g"); err != nil {
			t.Fatal(err)
		}
		mustGC(t, ws, cairn.GCOptions{Grace: 0}) // g's steps become candidates
		other := cairn.OpenStore(store)
		hooked := &afterList{Store: store, prefix: "steps/", fn: func() {
			commitN(t, other, "p", "p", 5, 7)
			if _, err := other.Prune(ctx, "p", keep); err != nil {
				t.Error(err)
			}
		}}
		rep := mustGC(t, cairn.OpenStore(hooked), cairn.GCOptions{Grace: 0})
		if rep.Tombstones != 0 || rep.Note != "" || rep.Deleted != 3 {
			t.Errorf("keep %d: gc beside commit+prune = %+v, want g's 3 steps deleted, no fence, no note", keep, rep)
		}
		if _, err := manifest.NewRepo(store, 0).ReadStep(ctx, "p", 8); !errors.Is(err, cas.ErrNotFound) {
			t.Errorf("keep %d: p@8 = %v, want no fence there", keep, err)
		}
		mustVerify(t, ws)
		checkState(t, ws, "p", gcState("p", 7))
		commitN(t, ws, "p", "p", 8, 8)
		for i := 0; i < 2; i++ {
			mustGC(t, ws, cairn.GCOptions{Grace: 0})
		}
		mustVerify(t, ws)
		checkState(t, ws, "p", gcState("p", 8))
	}
}

// TestGCRevivedBeforeMark: a session removed by an older cairn (base one
// above its head, no tombstone) gets a step between a gc run's listing
// and its mark. The mark sees the new step: the session is alive, gc does
// not try to fence it, and the rest of the run goes on.
func TestGCRevivedBeforeMark(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	commitN(t, ws, "r", "r", 1, 4)
	commitN(t, ws, "g", "g", 1, 3)
	if _, err := ws.Remove(ctx, "g"); err != nil {
		t.Fatal(err)
	}
	mustGC(t, ws, cairn.GCOptions{Grace: 0}) // g's steps become candidates
	if err := manifest.NewRepo(store, 0).WriteBase(ctx, "r", 5); err != nil {
		t.Fatal(err)
	}
	other := cairn.OpenStore(store)
	hooked := &afterList{Store: store, prefix: "steps/", fn: func() {
		commitN(t, other, "r", "r", 5, 5)
	}}
	rep := mustGC(t, cairn.OpenStore(hooked), cairn.GCOptions{Grace: 0})
	if rep.Deleted != 3 || rep.Tombstones != 0 || rep.Note != "" {
		t.Fatalf("gc beside a session revived before its mark = %+v, want g's 3 steps deleted, no fence, no note", rep)
	}
	mustVerify(t, ws)
	checkState(t, ws, "r", gcState("r", 5))
	for i := 0; i < 2; i++ {
		if r := mustGC(t, ws, cairn.GCOptions{Grace: 0}); r.Deleted != 0 {
			t.Fatalf("run %d deleted %d objects the revived session uses", i, r.Deleted)
		}
	}
	checkState(t, ws, "r", gcState("r", 5))
}
