package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestWriterPausedAtItsPut: the head check of manifest.HeadTrust runs
// when a commit starts, but a writer may be paused anywhere after it:
// here at the step's own put, its head (5) confirmed a moment before.
// Meanwhile others take the session past step 6 and prune it (or remove
// it and reuse the name), and gc, SlotFenceAge later, deletes slot 6.
// The writer's put then fills slot 6 again. It must not be acknowledged:
// its step lies below the base, where no reader looks.
func TestWriterPausedAtItsPut(t *testing.T) {
	for _, remove := range []bool{false, true} {
		t.Run(fmt.Sprintf("remove=%v", remove), func(t *testing.T) {
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
			p := newPause(store)
			slot6 := manifest.StepKey("d", 6)
			p.put = func(k string) bool { return k == slot6 }
			wsB := cairn.OpenStore(p)
			b, _ := wsB.Session("d")
			if h, err := b.Head(ctx); err != nil || h.Number != 5 {
				t.Fatalf("paused writer's head: %v %v", h, err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := commit(b, 99)
				done <- err
			}()
			waitPaused(t, p, done)

			ws := cairn.OpenStore(store)
			head := uint64(20)
			if remove {
				if _, err := ws.Remove(ctx, "d"); err != nil {
					t.Fatal(err)
				}
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
			opts := cairn.GCOptions{Grace: 0, Now: slotsAged}
			mustGC(t, ws, opts)
			if rep := mustGC(t, ws, opts); rep.Deleted == 0 {
				t.Fatalf("second gc deleted nothing; the scenario needs slot 6 emptied")
			}
			// The writer resumes, SlotFenceAge after it read its head.
			cairn.SetClock(wsB, func() time.Time { return slotsAged })
			close(p.release)
			err := <-done
			if !errors.Is(err, cairn.ErrConflict) {
				t.Errorf("the paused writer's commit: %v; want a conflict, its step lies below the base", err)
			}
			if h, err := ws.ReadHead(ctx, "d"); err != nil || h.Number != head {
				t.Fatalf("head after the paused writer's commit: %v %v; want step %d", h, err, head)
			}
			// The writer's next commit goes on from the store's head.
			if st, err := commit(b, 100); err != nil || st.Number != head+1 {
				t.Errorf("the writer's next commit: %v %v; want step %d", st, err, head+1)
			}
			// The step left below the base is garbage, no damage.
			mustVerify(t, ws)
			mustGC(t, ws, opts)
			logOf(t, ws, "d")
		})
	}
}

// holdAfterPut applies the first put of key and then stops until
// released: a writer paused just after its step landed.
type holdAfterPut struct {
	cas.Store
	key     string
	once    sync.Once
	reached chan struct{}
	release chan struct{}
}

func (h *holdAfterPut) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	err := h.Store.Put(ctx, key, data, opts)
	if key == h.key {
		h.once.Do(func() {
			close(h.reached)
			<-h.release
		})
	}
	return err
}

// TestWriterPausedAfterItsPut: a writer whose step landed and who was
// then paused past manifest.HeadTrust, while others built on its step
// and pruned past it, finds the base above its step when it checks. Its
// step was in the history (its child says so): it is acknowledged, not
// a conflict that a retry would commit twice.
func TestWriterPausedAfterItsPut(t *testing.T) {
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
	h := &holdAfterPut{Store: store, key: manifest.StepKey("d", 6), reached: make(chan struct{}), release: make(chan struct{})}
	wsB := cairn.OpenStore(h)
	b, _ := wsB.Session("d")
	if _, err := b.Head(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := commit(b, 6)
		done <- err
	}()
	select {
	case <-h.reached:
	case err := <-done:
		t.Fatalf("the commit ended (%v) before its put", err)
	}
	ws := cairn.OpenStore(store)
	c, _ := ws.Session("d")
	if h, err := c.Head(ctx); err != nil || h.Number != 6 {
		t.Fatalf("head after the paused writer's put: %v %v", h, err)
	}
	for i := 7; i <= 20; i++ {
		if _, err := commit(c, i); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ws.Prune(ctx, "d", 3); err != nil {
		t.Fatal(err)
	}
	cairn.SetClock(wsB, func() time.Time { return slotsAged })
	close(h.release)
	if err := <-done; err != nil {
		t.Errorf("the commit whose step others built on: %v; want it acknowledged", err)
	}
}
