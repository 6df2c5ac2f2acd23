package cairn_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// diesAt is a store whose process dies when it is about to put key:
// that put and every request after it fail without reaching the store,
// so nothing the process would do next (its clean-up included) happens.
type diesAt struct {
	cas.Store
	key  string
	dead atomic.Bool
}

var errDied = errors.New("the process died")

func (d *diesAt) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	if key == d.key {
		d.dead.Store(true)
	}
	if d.dead.Load() {
		return errDied
	}
	return d.Store.Put(ctx, key, data, opts)
}

func (d *diesAt) Get(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if d.dead.Load() {
		return nil, errDied
	}
	return d.Store.Get(ctx, key, off, n)
}

func (d *diesAt) List(ctx context.Context, prefix, after string, fn func(cas.Info) error) error {
	if d.dead.Load() {
		return errDied
	}
	return d.Store.List(ctx, prefix, after, fn)
}

func (d *diesAt) Delete(ctx context.Context, key string) error {
	if d.dead.Load() {
		return errDied
	}
	return d.Store.Delete(ctx, key)
}

// TestFirstStepAfterForkDiedBeforeItsStep: a fork of a pruned session
// sets its new name's base (its source's, 5) before it puts its step. A
// fork that died between the two left n with that base and no step, and
// n could never be written again: its first commit put n@1 below the
// base and was refused, and every commit or fork after that found "its
// base marker says step 5 but its newest step is 1" and refused as
// corrupt. A session's first step is now numbered from its base.
func TestFirstStepAfterForkDiedBeforeItsStep(t *testing.T) {
	ctx := context.Background()
	raw := mem.New()
	ws := cairn.OpenStore(raw)
	commitN(t, ws, "src", "s", 1, 8)
	if _, err := ws.Prune(ctx, "src", 4); err != nil {
		t.Fatal(err)
	}
	from, err := ws.Resolve(ctx, "src@8")
	if err != nil {
		t.Fatal(err)
	}
	dying := &diesAt{Store: raw, key: manifest.StepKey("n", 8)}
	if _, err := cairn.OpenStore(dying).Fork(ctx, from, "n"); err == nil {
		t.Fatal("the fork whose process died before its step was acknowledged")
	}
	if base, err := manifest.NewRepo(raw, 0).ReadBase(ctx, "n"); err != nil || base != 5 {
		t.Fatalf("the dead fork left n's base at %d (%v); the test needs 5", base, err)
	}

	// Ten minutes on by the store's clock, the dead fork's pin no longer
	// holds n's first step.
	later := cairn.OpenStore(pinsAged{raw, 11 * time.Minute})
	s, err := later.Session("n")
	if err != nil {
		t.Fatal(err)
	}
	for want := uint64(5); want <= 6; want++ {
		st, err := s.Commit(ctx, cairn.JSON([]byte(`{"step":1}`)), cairn.CommitOptions{})
		if err != nil || st.Number != want {
			t.Fatalf("commit to n after the dead fork: %v %v; want n@%d", st, err, want)
		}
	}
	fresh := cairn.OpenStore(raw)
	if got := logOf(t, fresh, "n"); len(got) != 2 || got[0] != "n@6" || got[1] != "n@5" {
		t.Errorf("log of n: %v; want n@6, n@5", got)
	}
	mustVerify(t, fresh)
}

// pinsAged shows the store's fork pins age older than they are: written
// that long before the store's clock says now.
type pinsAged struct {
	cas.Store
	age time.Duration
}

func (s pinsAged) older(key string, i cas.Info) cas.Info {
	if strings.HasPrefix(key, "pins/") && !i.ModTime.IsZero() {
		i.ModTime = i.ModTime.Add(-s.age)
	}
	return i
}

func (s pinsAged) Stat(ctx context.Context, key string) (cas.Info, error) {
	i, err := s.Store.Stat(ctx, key)
	return s.older(key, i), err
}

func (s pinsAged) List(ctx context.Context, prefix, after string, fn func(cas.Info) error) error {
	return s.Store.List(ctx, prefix, after, func(i cas.Info) error { return fn(s.older(i.Key, i)) })
}
