package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestStaleWriterAfterGC: a writer paused with step 5 as its head while
// others took the session to step 20 and pruned (or removed) it, and gc
// then deleted step 6's slot, filled that slot again on its return: its
// conditional put succeeded and its step was acknowledged below the
// session's base, where no reader looks. Two workers extended the
// session, one of them unnoticed. gc now keeps step objects until they
// are manifest.SlotFenceAge old, and a writer that has held its head
// longer than manifest.HeadTrust checks it against the store's before
// it commits: the paused writer gets a conflict in both orders of time,
// and nothing lands below the base.
func TestStaleWriterAfterGC(t *testing.T) {
	for _, c := range []struct {
		name   string
		remove bool // rm the session and commit to its name again, else prune
		aged   bool // gc and the paused writer run SlotFenceAge later
	}{
		{"prune, gc at once", false, false},
		{"prune, gc later", false, true},
		{"rm and reuse, gc at once", true, false},
		{"rm and reuse, gc later", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			store := mem.New()
			a, _ := cairn.OpenStore(store).Session("d")
			commit := func(s *cairn.Session, i int) (*cairn.Step, error) {
				return s.Commit(ctx, cairn.JSON([]byte(fmt.Sprintf(`{"i":%d}`, i))), cairn.CommitOptions{})
			}
			for i := 1; i <= 5; i++ {
				if _, err := commit(a, i); err != nil {
					t.Fatal(err)
				}
			}
			wsB := cairn.OpenStore(store)
			b, _ := wsB.Session("d")
			if h, err := b.Head(ctx); err != nil || h.Number != 5 {
				t.Fatalf("paused writer's head: %v %v", h, err)
			}
			ws := cairn.OpenStore(store)
			head := uint64(20)
			if c.remove {
				if _, err := ws.Remove(ctx, "d"); err != nil {
					t.Fatal(err)
				}
				// The name again, from a writer that never saw the old
				// session: its first step goes above the tombstone (7).
				n, _ := cairn.OpenStore(store).Session("d")
				if st, err := commit(n, 7); err != nil || st.Number != 7 {
					t.Fatalf("commit to the name again: %v %v", st, err)
				}
				head = 7
			} else {
				for i := 6; i <= 20; i++ {
					if _, err := commit(a, i); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := ws.Prune(ctx, "d", 3); err != nil {
					t.Fatal(err)
				}
			}
			opts := cairn.GCOptions{Grace: 0}
			if c.aged {
				opts.Now = slotsAged
				cairn.SetClock(wsB, func() time.Time { return slotsAged })
			}
			var deleted int
			for range 2 {
				deleted = mustGC(t, ws, opts).Deleted
			}
			st, err := commit(b, 99)
			if !errors.Is(err, cairn.ErrConflict) {
				t.Fatalf("the paused writer's commit: %v, %v; want a conflict", st, err)
			}
			// Once its slot may be gone, the conflict says what happened,
			// not that another writer took the slot.
			if want := fmt.Sprintf("moved on while this writer held step 5: its head is step %d", head); c.aged && !strings.Contains(err.Error(), want) {
				t.Errorf("the paused writer's conflict: %v; want it to say %q", err, want)
			}
			if c.aged != (deleted > 0) {
				t.Errorf("second gc deleted %d objects; want some only once the steps are SlotFenceAge old", deleted)
			}
			if h, err := ws.ReadHead(ctx, "d"); err != nil || h.Number != head {
				t.Fatalf("head after the paused writer's commit: %v %v; want step %d", h, err, head)
			}
			if _, err := store.Stat(ctx, manifest.StepKey("d", 6)); c.aged && !errors.Is(err, cas.ErrNotFound) {
				t.Fatalf("slot 6 after the refused commit: %v; want it left empty", err)
			}
		})
	}
}

// TestHeadHeldLongCheckedOnce: a writer that has held its head longer
// than manifest.HeadTrust reads the store's head once before it commits;
// when that is its own head, the commit goes on, and the next ones cost
// no read again.
func TestHeadHeldLongCheckedOnce(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	s, _ := ws.Session("d")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"i":1}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(manifest.HeadTrust + time.Minute)
	cairn.SetClock(ws, func() time.Time { return later })
	for i, want := range []int64{1, 0} {
		before := ws.Requests()
		if _, err := s.Commit(ctx, cairn.JSON([]byte(fmt.Sprintf(`{"i":%d}`, i+2))), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
		used := ws.Requests().Sub(before)
		if used.Put != 1 || (used.List > 0) != (want > 0) {
			t.Errorf("commit %d after holding the head %v: %+v; want 1 PUT and %d head reads", i+2, manifest.HeadTrust, used, want)
		}
	}
}
