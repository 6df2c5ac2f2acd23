package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestForkPausedPastItsFence: a fork of W@8 to F stopped before its
// step's put long enough for gc to expire its pin and fence F@8 with a
// tombstone. F is then committed to again (F@9, above the tombstone),
// and gc, once the tombstone is SlotFenceAge old, deletes it: slot F@8
// is empty again. The forker's put then fills it. The fork must not be
// acknowledged: F@8 lies below F's base, where no reader looks.
func TestForkPausedPastItsFence(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	commitN(t, ws, "W", "W", 1, 10)
	p := newPause(store)
	p.put = func(key string) bool { return strings.HasPrefix(key, "steps/F/") }
	forker := cairn.OpenStore(p)
	from, err := forker.Resolve(ctx, "W@8")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := forker.Fork(ctx, from, "F")
		done <- err
	}()
	waitPaused(t, p, done)
	later := time.Now().Add(time.Hour)
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: later})
	if rep := mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: later.Add(cairn.ForkPinGrace)}); rep.Tombstones != 1 {
		t.Fatalf("gc fenced %d slots; want the expired pin's", rep.Tombstones)
	}
	// The name again: its first step goes above the fence.
	f, _ := cairn.OpenStore(store).Session("F")
	if st, err := f.Commit(ctx, cairn.JSON([]byte(`{"again":1}`)), cairn.CommitOptions{}); err != nil || st.Number != 9 {
		t.Fatalf("commit to F again: %v %v", st, err)
	}
	aged := time.Now().Add(3 * time.Hour)
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: aged})
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: aged})
	if _, err := store.Stat(ctx, manifest.StepKey("F", 8)); err == nil {
		t.Fatal("gc left the fence in F@8; the scenario needs its slot emptied")
	}
	cairn.SetClock(forker, func() time.Time { return aged })
	close(p.release)
	if err := <-done; !errors.Is(err, cairn.ErrConflict) {
		t.Errorf("the fork resumed after its fence was collected: %v; want a conflict, it lies below F's base", err)
	}
	if h, err := ws.ReadHead(ctx, "F"); err != nil || h.Number != 9 {
		t.Fatalf("head of F: %v %v; want step 9", h, err)
	}
}
