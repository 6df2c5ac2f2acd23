package cairn_test

import (
	"context"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestRaceForkBaseHidesAckedFork (a defect a race hunt found, fixed since; kept as its regression test): two forks to the new name f: one of
// s@5, s pruned to base 5, and one of o@3, o whole (base 1). The fork of
// s@5 finds f empty and is slow to put f's base marker (5); the fork of
// o@3 writes f@3 and is acknowledged. Then the fork of s@5 writes f's
// base, 5, finds f@3 and loses: the acknowledged f@3 is below f's base,
// in no history, and f reads as corrupt.
func TestRaceForkBaseHidesAckedFork(t *testing.T) {
	ctx := context.Background()
	raw := mem.New()
	ws := cairn.OpenStore(raw)
	commitN(t, ws, "s", "s", 1, 6)
	if _, err := ws.Prune(ctx, "s", 2); err != nil {
		t.Fatal(err)
	}
	commitN(t, ws, "o", "o", 1, 3)
	s5, err := ws.Resolve(ctx, "s@5")
	if err != nil {
		t.Fatal(err)
	}
	o3, err := ws.Resolve(ctx, "o@3")
	if err != nil {
		t.Fatal(err)
	}
	p := newPause(raw)
	p.put = func(key string) bool { return key == manifest.BaseKey("f") }
	slow := make(chan error, 1)
	go func() {
		_, err := cairn.OpenStore(p).Fork(ctx, s5, "f")
		slow <- err
	}()
	waitPaused(t, p, slow)
	fast := make(chan error, 1)
	go func() {
		_, err := cairn.OpenStore(raw).Fork(ctx, o3, "f")
		fast <- err
	}()
	var ackErr error
	select {
	case ackErr = <-fast:
		close(p.release)
	case <-time.After(200 * time.Millisecond):
		// The fork of o@3 waits for the one in flight above it.
		close(p.release)
		ackErr = <-fast
	}
	slowErr := <-slow
	if (slowErr == nil) == (ackErr == nil) {
		t.Fatalf("forks of s@5 and o@3: %v, %v; want exactly one to land", slowErr, ackErr)
	}
	want := uint64(3)
	if slowErr == nil {
		want = 5
	}
	fresh := cairn.OpenStore(raw)
	h, err := fresh.Resolve(ctx, "f")
	if err != nil || h.Number != want {
		t.Errorf("head of f: %v %v; want the acknowledged fork's f@%d", h, err, want)
	}
	mustVerify(t, fresh)
}
