package cairn_test

import (
	"context"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestSpillingWriterPausedPastGC: a writer whose step 6 holds a file
// past manifest.SpillThreshold wrote its spill pack and was paused at
// its step's put while others took the session to step 40 and pruned
// it, and gc (SlotFenceAge later) deleted slot 6 and the orphaned spill
// pack. Its put then fills slot 6, naming a pack that is gone: it must
// be a conflict, and the store must verify and collect clean.
func TestSpillingWriterPausedPastGC(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	dir := t.TempDir()
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := cairn.OpenStore(store).Session("d")
	commitDir := func(s *cairn.Session) (*cairn.Step, error) {
		return s.Commit(ctx, cairn.Dir(dir), cairn.CommitOptions{})
	}
	for i := 1; i <= 5; i++ {
		write("n", []byte(strings.Repeat("x", i)))
		if _, err := commitDir(a); err != nil {
			t.Fatal(err)
		}
	}
	p := newPause(store)
	slot6 := manifest.StepKey("d", 6)
	p.put = func(k string) bool { return k == slot6 }
	wsB := cairn.OpenStore(p)
	b, _ := wsB.Session("d")
	if _, err := b.Head(ctx); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, manifest.SpillThreshold+(1<<20))
	rand.New(rand.NewSource(1)).Read(big)
	write("big", big)
	done := make(chan error, 1)
	go func() {
		_, err := commitDir(b)
		done <- err
	}()
	waitPaused(t, p, done)
	if err := os.Remove(filepath.Join(dir, "big")); err != nil {
		t.Fatal(err)
	}
	for i := 6; i <= 40; i++ {
		write("n", []byte(strings.Repeat("y", i)))
		if _, err := commitDir(a); err != nil {
			t.Fatal(err)
		}
	}
	ws := cairn.OpenStore(store)
	if _, err := ws.Prune(ctx, "d", 3); err != nil {
		t.Fatal(err)
	}
	opts := cairn.GCOptions{Grace: 0, Now: slotsAged}
	mustGC(t, ws, opts)
	mustGC(t, ws, opts)
	if _, err := store.Stat(ctx, slot6); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("gc kept slot 6 (%v); the scenario needs it empty", err)
	}
	cairn.SetClock(wsB, func() time.Time { return slotsAged })
	close(p.release)
	if err := <-done; !errors.Is(err, cairn.ErrConflict) {
		t.Errorf("the spilling writer's commit: %v; want a conflict", err)
	}
	mustVerify(t, ws)
	mustGC(t, ws, opts)
	logOf(t, ws, "d")
}
