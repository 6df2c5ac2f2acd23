package cairn_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// storeKeys returns every key of store under prefix.
func storeKeys(t *testing.T, store cas.Store, prefix string) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	if err := store.List(context.Background(), prefix, "", func(i cas.Info) error {
		keys[i.Key] = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestGCDamagedBaseMarker: a base marker that claims a base above a
// session's newest step, in no form a removal ever wrote (rm now puts a
// tombstone above the head; older cairns wrote head+1 and nothing else),
// is damage, not a removal. gc deletes nothing, fences nothing, and says
// which session and what the marker claims; verify reports it too. The
// session's steps stay readable once the marker is repaired.
func TestGCDamagedBaseMarker(t *testing.T) {
	ctx := context.Background()
	for name, marker := range map[string]string{
		"two above":    "7",
		"far above":    "4611686018427387904",
		"one too many": "1000",
	} {
		t.Run(name, func(t *testing.T) {
			store := mem.New()
			ws := cairn.OpenStore(store)
			commitN(t, ws, "d", "d", 1, 5)
			commitN(t, ws, "g", "g", 1, 3)
			if _, err := ws.Remove(ctx, "g"); err != nil {
				t.Fatal(err)
			}
			// g's steps are candidates now, due at the next run.
			mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
			if err := store.Put(ctx, manifest.BaseKey("d"), []byte(marker), cas.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			before := storeKeys(t, store, "")
			for _, dry := range []bool{true, false} {
				rep, err := ws.GC(ctx, cairn.GCOptions{Grace: 0, DryRun: dry, Now: slotsAged})
				if err == nil {
					t.Fatalf("gc (dry run %v) beside a damaged base marker: no error; report %+v", dry, rep)
				}
				if !errors.Is(err, cairn.ErrCorrupt) {
					t.Errorf("gc error %q is not ErrCorrupt", err)
				}
				want := "session d: its base marker says step " + marker + " but its newest step is 5"
				if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "nothing deleted") {
					t.Errorf("gc error = %q, want it to say %q and that nothing was deleted", err, want)
				}
			}
			if after := storeKeys(t, store, ""); len(after) != len(before) {
				t.Fatalf("gc changed the store: %d keys before, %d after", len(before), len(after))
			}
			rep, err := ws.Verify(ctx)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range rep.Problems {
				if strings.Contains(p.Err.Error(), "base marker says step "+marker+" but its newest step is 5") {
					found = true
				}
			}
			if !found {
				t.Errorf("verify problems = %v, want the damaged base marker of d", rep.Problems)
			}
			// Repaired, d is whole and gc goes on.
			if err := store.Delete(ctx, manifest.BaseKey("d")); err != nil {
				t.Fatal(err)
			}
			mustVerify(t, ws)
			checkState(t, ws, "d", gcState("d", 5))
			if r := mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged}); r.Deleted != 3 || r.Tombstones != 0 {
				t.Fatalf("gc after the repair = %+v, want g's 3 steps deleted", r)
			}
			checkState(t, ws, "d", gcState("d", 5))
			checkState(t, ws, "d@1", gcState("d", 1))
		})
	}
}

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
	if r := mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged}); r.Tombstones != 1 || r.Candidates != 4 || r.Note != "" {
		t.Fatalf("run 1 = %+v, want r fenced and its 4 steps candidates", r)
	}
	if r := mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged}); r.Deleted != 4 {
		t.Fatalf("run 2 = %+v, want r's 4 steps deleted", r)
	}
	mustVerify(t, ws)
	checkState(t, ws, "k", gcState("k", 2))

	// The oldest gc replaced such a session's newest step by a tombstone
	// in place, below the base rm had set, and swept the rest later.
	commitN(t, ws, "o", "o", 1, 4)
	repo := manifest.NewRepo(store, 0)
	if err := store.Delete(ctx, manifest.StepKey("o", 4)); err != nil {
		t.Fatal(err)
	}
	if err := repo.Fence(ctx, "o", 4); err != nil { // tombstone at o@4, base 5
		t.Fatal(err)
	}
	if r := mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged}); r.Tombstones != 0 || r.Candidates != 3 || r.Note != "" {
		t.Fatalf("run 1 over an old in-place tombstone = %+v, want o's 3 older steps candidates", r)
	}
	if r := mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged}); r.Deleted != 3 {
		t.Fatalf("run 2 over an old in-place tombstone = %+v, want o's 3 older steps deleted", r)
	}
	mustVerify(t, ws)
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
		mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged}) // g's steps become candidates
		other := cairn.OpenStore(store)
		hooked := &afterList{Store: store, prefix: "steps/", fn: func() {
			commitN(t, other, "p", "p", 5, 7)
			if _, err := other.Prune(ctx, "p", keep); err != nil {
				t.Error(err)
			}
		}}
		rep := mustGC(t, cairn.OpenStore(hooked), cairn.GCOptions{Grace: 0, Now: slotsAged})
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
			mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
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
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged}) // g's steps become candidates
	if err := manifest.NewRepo(store, 0).WriteBase(ctx, "r", 5); err != nil {
		t.Fatal(err)
	}
	other := cairn.OpenStore(store)
	hooked := &afterList{Store: store, prefix: "steps/", fn: func() {
		commitN(t, other, "r", "r", 5, 5)
	}}
	rep := mustGC(t, cairn.OpenStore(hooked), cairn.GCOptions{Grace: 0, Now: slotsAged})
	if rep.Deleted != 3 || rep.Tombstones != 0 || rep.Note != "" {
		t.Fatalf("gc beside a session revived before its mark = %+v, want g's 3 steps deleted, no fence, no note", rep)
	}
	mustVerify(t, ws)
	checkState(t, ws, "r", gcState("r", 5))
	for i := 0; i < 2; i++ {
		if r := mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged}); r.Deleted != 0 {
			t.Fatalf("run %d deleted %d objects the revived session uses", i, r.Deleted)
		}
	}
	checkState(t, ws, "r", gcState("r", 5))
}

// TestVerifyUnreadableBaseMarker: a base marker that is no step number
// (or a huge object) is read no further than the longest marker, and gc
// refuses it in words naming the session, deleting nothing. verify blames
// the base marker, not the head hint, and still checks every step.
func TestVerifyUnreadableBaseMarker(t *testing.T) {
	ctx := context.Background()
	for name, marker := range map[string]string{
		"letters":      "abc",
		"zero":         "0",
		"out of range": "4611686018427387905",
		"huge":         strings.Repeat("7", 1<<20),
	} {
		t.Run(name, func(t *testing.T) {
			store := mem.New()
			ws := cairn.OpenStore(store)
			commitN(t, ws, "d", "d", 1, 5)
			commitN(t, ws, "g", "g", 1, 3)
			if _, err := ws.Remove(ctx, "g"); err != nil {
				t.Fatal(err)
			}
			mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
			if err := store.Put(ctx, manifest.BaseKey("d"), []byte(marker), cas.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			before := storeKeys(t, store, "")
			logged := &getLog{Store: store, key: manifest.BaseKey("d")}
			_, err := cairn.OpenStore(logged).GC(ctx, cairn.GCOptions{Grace: 0, Now: slotsAged})
			if !errors.Is(err, cairn.ErrCorrupt) || !strings.Contains(err.Error(), "the base marker of session d") ||
				!strings.Contains(err.Error(), "nothing deleted") || strings.Contains(err.Error(), "steps/") {
				t.Errorf("gc beside a bad base marker: %v", err)
			}
			for _, n := range logged.ns {
				if n < 0 || n > 21 {
					t.Errorf("gc read %d bytes of the base marker, want at most 21", n)
				}
			}
			if after := storeKeys(t, store, ""); len(after) != len(before) {
				t.Fatalf("gc changed the store: %d keys before, %d after", len(before), len(after))
			}
			rep, err := ws.Verify(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Problems) != 1 || rep.Problems[0].Object != manifest.BaseKey("d") || rep.Steps != 5 {
				t.Errorf("verify = %d steps, problems %v; want d's 5 steps checked and one problem, d's base marker", rep.Steps, rep.Problems)
			}
		})
	}
}
