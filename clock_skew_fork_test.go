package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/internal/s3test"
	"github.com/cairnlog/cairn/manifest"
)

// storeBehind is a store whose clock runs behind the workers' by skew:
// every time it reports (Stat, List) is skew earlier than the one the
// real server set. To a worker it is the same as its own clock running
// skew ahead of the store's, which S3 accepts up to 15 minutes.
type storeBehind struct {
	cas.Store
	skew time.Duration
}

func (s storeBehind) Stat(ctx context.Context, key string) (cas.Info, error) {
	i, err := s.Store.Stat(ctx, key)
	if !i.ModTime.IsZero() {
		i.ModTime = i.ModTime.Add(-s.skew)
	}
	return i, err
}

func (s storeBehind) List(ctx context.Context, prefix, after string, fn func(cas.Info) error) error {
	return s.Store.List(ctx, prefix, after, func(i cas.Info) error {
		if !i.ModTime.IsZero() {
			i.ModTime = i.ModTime.Add(-s.skew)
		}
		return fn(i)
	})
}

// clockSkew is within what S3 accepts and past manifest.ForkPinGrace.
const clockSkew = 12 * time.Minute

// TestFirstStepBesideForkClockSkewS3 is TestFirstStepBesideForkInFlight
// on MinIO and versitygw, with the store's clock 12 minutes behind the workers'. The
// writer measured the fork's pin's age as its own clock minus the
// store's time, found it older than ForkPinGrace, did not wait, and was
// acknowledged n@1, which the fork's n@5 then hid: two writers extending
// one session unnoticed, from a clock a few minutes off. Ages are now
// read on the store's clock alone.
func TestFirstStepBesideForkClockSkewS3(t *testing.T) {
	for _, srv := range s3test.Servers {
		t.Run(srv.Name, func(t *testing.T) { firstStepBesideForkClockSkew(t, srv.Start(t)) })
	}
}

func firstStepBesideForkClockSkew(t *testing.T, b *s3test.Bucket) {
	ctx := context.Background()
	raw := storeBehind{openMinIOStore(t, b, "skew-first"), clockSkew}
	ws := cairn.OpenStore(raw)
	commitN(t, ws, "src", "s", 1, 5)
	from, err := ws.Resolve(ctx, "src@5")
	if err != nil {
		t.Fatal(err)
	}
	p := newPause(raw)
	p.put = func(key string) bool { return key == manifest.StepKey("n", 5) }
	forked := make(chan error, 1)
	go func() {
		_, err := cairn.OpenStore(p).Fork(ctx, from, "n")
		forked <- err
	}()
	waitPaused(t, p, forked) // the fork has looked at n and found it empty

	w, _ := cairn.OpenStore(raw).Session("n")
	committed := make(chan error, 1)
	go func() {
		_, err := w.Commit(ctx, cairn.JSON([]byte(`{"w":1}`)), cairn.CommitOptions{})
		committed <- err
	}()
	select {
	case err := <-committed:
		close(p.release)
		<-forked
		t.Fatalf("the first step was answered (%v) while a fork to its name was in flight; log of n: %v",
			err, logOf(t, cairn.OpenStore(raw), "n"))
	case <-time.After(300 * time.Millisecond):
	}
	close(p.release)
	if err := <-forked; err != nil {
		t.Fatalf("fork: %v", err)
	}
	err = <-committed
	var ce *cairn.ConflictError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "a fork took the name") {
		t.Fatalf("first step beside the fork: %v; want the conflict", err)
	}
	fresh := cairn.OpenStore(raw)
	if got := logOf(t, fresh, "n"); got[0] != "n@5" {
		t.Errorf("log of n: %v; want the fork's n@5 as head", got)
	}
	mustVerify(t, fresh)
}

// TestForkLockClockSkewS3: a fork to n holds n's fork lock (paused at
// its step's put) when a second fork to n begins, with the store's clock
// 12 minutes behind the workers'. The second measured the lock's age by
// its own clock, took it for one left by a dead fork, deleted it and went
// ahead: two forks to one name at once, which the lock is there to
// prevent. It must give way (a conflict) and the first fork land.
func TestForkLockClockSkewS3(t *testing.T) {
	for _, srv := range s3test.Servers {
		t.Run(srv.Name, func(t *testing.T) { forkLockClockSkew(t, srv.Start(t)) })
	}
}

func forkLockClockSkew(t *testing.T, b *s3test.Bucket) {
	ctx := context.Background()
	raw := storeBehind{openMinIOStore(t, b, "skew-lock"), clockSkew}
	ws := cairn.OpenStore(raw)
	commitN(t, ws, "src", "s", 1, 7)
	fromA, err := ws.Resolve(ctx, "src@5")
	if err != nil {
		t.Fatal(err)
	}
	fromB, err := ws.Resolve(ctx, "src@7")
	if err != nil {
		t.Fatal(err)
	}
	p := newPause(raw)
	p.put = func(key string) bool { return key == manifest.StepKey("n", 5) }
	forkedA := make(chan error, 1)
	go func() {
		_, err := cairn.OpenStore(p).Fork(ctx, fromA, "n")
		forkedA <- err
	}()
	waitPaused(t, p, forkedA) // A holds n's lock

	wsB := cairn.OpenStore(raw)
	cairn.SetForkWait(wsB, 300*time.Millisecond)
	_, errB := wsB.Fork(ctx, fromB, "n")
	close(p.release)
	errA := <-forkedA
	if errB == nil || !errors.Is(errB, cairn.ErrConflict) {
		t.Errorf("second fork to n while the first held its lock: %v; want a conflict (it gives way)", errB)
	}
	if errA != nil {
		t.Errorf("first fork to n: %v; want it to land", errA)
	}
	fresh := cairn.OpenStore(raw)
	if got := logOf(t, fresh, "n"); got[0] != "n@5" {
		t.Errorf("log of n: %v; want the first fork's n@5 as head", got)
	}
	mustVerify(t, fresh)
}
