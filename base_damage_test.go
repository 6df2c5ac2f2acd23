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

// damagedBaseMarkers are base markers above a 5-step session's newest
// step in forms no removal writes (a removal writes a tombstone above the
// head, or, an older cairn's, exactly head+1).
var damagedBaseMarkers = []string{"7", "99", "1000", "4611686018427387904"}

// checkDamagedBase fails unless err reports d's damaged base marker: a
// corruption error (not "not found", not "removed") in the user's words,
// naming no store key.
func checkDamagedBase(t *testing.T, what string, err error, marker string, head int) {
	t.Helper()
	want := "session d: its base marker says step " + marker + " but its newest step is " + strconv.Itoa(head)
	switch {
	case err == nil:
		t.Errorf("%s: no error, want the damaged base marker reported", what)
	case errors.Is(err, cairn.ErrNotFound) || errors.Is(err, cairn.ErrRemoved):
		t.Errorf("%s: %q is ErrNotFound/ErrRemoved, want ErrCorrupt: a damaged base marker must not make a live session read as gone", what, err)
	case !errors.Is(err, cairn.ErrCorrupt):
		t.Errorf("%s: %q is not ErrCorrupt", what, err)
	case !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "steps/"):
		t.Errorf("%s: %q, want it to say %q and name no store key", what, err, want)
	}
}

// TestDamagedBaseMarkerReaders: a session whose base marker was
// overwritten with a number above its head that no removal writes is
// neither removed nor pruned for any reader: the head, a step, the log,
// the head walk of sessions, prune, rm and verify all report the damaged
// marker (ErrCorrupt); a commit that loads the head from the store is
// refused before anything is written, so no step is acknowledged that
// readers would not show. Put right, the session reads whole again.
func TestDamagedBaseMarkerReaders(t *testing.T) {
	ctx := context.Background()
	for _, marker := range damagedBaseMarkers {
		t.Run(marker, func(t *testing.T) {
			store := mem.New()
			commitN(t, cairn.OpenStore(store), "d", "d", 1, 5)
			if err := store.Put(ctx, manifest.BaseKey("d"), []byte(marker), cas.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			base, _ := strconv.ParseUint(marker, 10, 64)
			before := storeKeys(t, store, "")
			ws := cairn.OpenStore(store) // no head held: every reader asks the store
			s, err := ws.Session("d")
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Head(ctx)
			checkDamagedBase(t, "Session.Head", err, marker, 5)
			_, err = ws.ReadHead(ctx, "d")
			checkDamagedBase(t, "Workspace.ReadHead", err, marker, 5)
			for _, n := range []uint64{3, 5, base, base + 1} {
				_, err = s.Step(ctx, n)
				checkDamagedBase(t, "Step "+strconv.FormatUint(n, 10), err, marker, 5)
			}
			err = s.Log(ctx, func(*cairn.Step) error { return nil })
			checkDamagedBase(t, "Session.Log", err, marker, 5)
			_, err = ws.Prune(ctx, "d", 2)
			checkDamagedBase(t, "Prune", err, marker, 5)
			_, err = ws.Remove(ctx, "d")
			checkDamagedBase(t, "Remove", err, marker, 5)

			// A commit onto it is refused before anything is written,
			// through a fresh workspace and through a fresh Session.
			for i, w := range []*cairn.Workspace{ws, cairn.OpenStore(store)} {
				c, _ := w.Session("d")
				st, err := c.Commit(ctx, cairn.JSON(gcState("d", 6)), cairn.CommitOptions{})
				checkDamagedBase(t, "Commit "+strconv.Itoa(i), err, marker, 5)
				if st != nil {
					t.Errorf("commit %d acknowledged %s", i, st)
				}
			}
			if after := storeKeys(t, store, ""); len(after) != len(before) {
				t.Fatalf("readers, prune, rm or a commit changed the store: %d keys before, %d after", len(before), len(after))
			}

			// verify, named the session, reports the marker instead of
			// calling the session removed.
			rep, err := ws.Verify(ctx, "d")
			if err != nil {
				t.Fatalf("verify d: %v, want a report naming the damaged base marker", err)
			}
			found := false
			for _, p := range rep.Problems {
				found = found || p.Object == manifest.BaseKey("d") && strings.Contains(p.Err.Error(), "base marker says step "+marker)
			}
			if !found {
				t.Errorf("verify d problems = %v, want d's base marker", rep.Problems)
			}

			// Put right, every reader sees the session whole, and a
			// commit goes on from its head.
			if err := store.Delete(ctx, manifest.BaseKey("d")); err != nil {
				t.Fatal(err)
			}
			ws = cairn.OpenStore(store)
			checkState(t, ws, "d", gcState("d", 5))
			checkState(t, ws, "d@3", gcState("d", 3))
			if got := logOf(t, ws, "d"); len(got) != 5 {
				t.Errorf("log after the repair = %v, want 5 steps", got)
			}
			commitN(t, ws, "d", "d", 6, 6)
			checkState(t, ws, "d", gcState("d", 6))
		})
	}
}

// TestGenuineRemovalAndPruneStillRead: the forms a removal writes still
// read as removed (the tombstone above the head, and an older cairn's
// base exactly one above a newest step), and a pruned session as pruned.
func TestGenuineRemovalAndPruneStillRead(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	commitN(t, ws, "r", "r", 1, 3) // removed now
	commitN(t, ws, "l", "l", 1, 3) // removed by an older cairn
	commitN(t, ws, "p", "p", 1, 5) // pruned
	if _, err := ws.Remove(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if err := manifest.NewRepo(store, 0).WriteBase(ctx, "l", 4); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Prune(ctx, "p", 2); err != nil {
		t.Fatal(err)
	}
	ws = cairn.OpenStore(store)
	for _, name := range []string{"r", "l"} {
		s, _ := ws.Session(name)
		if _, err := s.Head(ctx); !errors.Is(err, cairn.ErrRemoved) {
			t.Errorf("head of %s = %v, want ErrRemoved", name, err)
		}
		if _, err := s.Step(ctx, 2); !errors.Is(err, cairn.ErrRemoved) {
			t.Errorf("%s@2 = %v, want ErrRemoved", name, err)
		}
		if _, err := ws.ReadHead(ctx, name); !errors.Is(err, cairn.ErrRemoved) {
			t.Errorf("ReadHead %s = %v, want ErrRemoved", name, err)
		}
		if _, err := ws.Verify(ctx, name); !errors.Is(err, cairn.ErrRemoved) {
			t.Errorf("verify %s = %v, want ErrRemoved", name, err)
		}
	}
	// Committing to a removed name starts a new history above the removal.
	for name, want := range map[string]uint64{"r": 5, "l": 4} {
		s, _ := ws.Session(name)
		st, err := s.Commit(ctx, cairn.JSON([]byte(`{"again":1}`)), cairn.CommitOptions{})
		if err != nil || st.Number != want {
			t.Fatalf("commit to removed %s: %v, %v; want step %d", name, st, err, want)
		}
		if h, err := cairn.OpenStore(store).ReadHead(ctx, name); err != nil || h.Number != want {
			t.Errorf("head of %s after the new commit: %v, %v; want step %d", name, h, err, want)
		}
	}
	s, _ := ws.Session("p")
	if h, err := s.Head(ctx); err != nil || h.Number != 5 {
		t.Errorf("head of pruned p: %v, %v", h, err)
	}
	if _, err := s.Step(ctx, 2); !errors.Is(err, cairn.ErrNotFound) || errors.Is(err, cairn.ErrRemoved) || !strings.Contains(err.Error(), "pruned") {
		t.Errorf("p@2 = %v, want not found: pruned", err)
	}
	if got := logOf(t, ws, "p"); len(got) != 2 || got[1] != "p@4(truncated)" {
		t.Errorf("log of pruned p = %v", got)
	}
}

// TestReadHeadPruneAfterListing: a reader lists a pruned session's steps;
// before it reads the base, a writer commits more steps and prunes above
// the listed head (to one or two above it). The reader must look above
// the listed head again and read the new head, neither calling the
// session removed (base = listed head + 1 is an older cairn's removal
// form) nor damaged.
func TestReadHeadPruneAfterListing(t *testing.T) {
	for _, keep := range []uint64{2, 3} { // base listed head+2, head+1
		t.Run(strconv.FormatUint(keep, 10), func(t *testing.T) {
			ctx := context.Background()
			store := mem.New()
			ws := cairn.OpenStore(store)
			commitN(t, ws, "p", "p", 1, 4)
			if _, err := ws.Prune(ctx, "p", 3); err != nil { // base 2: a marker exists
				t.Fatal(err)
			}
			other := cairn.OpenStore(store)
			hooked := &afterList{Store: store, prefix: "steps/p/", fn: func() {
				commitN(t, other, "p", "p", 5, 7)
				if _, err := other.Prune(ctx, "p", keep); err != nil {
					t.Error(err)
				}
			}}
			rws := cairn.OpenStore(hooked)
			s, _ := rws.Session("p")
			h, err := s.Head(ctx)
			if err != nil || h.Number != 7 {
				t.Fatalf("keep %d: head of p read beside commit+prune: %v, %v; want p@7", keep, h, err)
			}
		})
	}
}
