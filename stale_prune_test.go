package cairn_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// listHook runs once, after the first listing through it returns: a
// process paused right after it read a session's head.
type listHook struct {
	cas.Store
	once  sync.Once
	after func()
}

func (h *listHook) List(ctx context.Context, prefix, startAfter string, fn func(cas.Info) error) error {
	err := h.Store.List(ctx, prefix, startAfter, fn)
	h.once.Do(h.after)
	return err
}

// TestPrunePausedDoesNotLowerTheBase: a prune to 60 steps paused after it
// read the head (100) and base (1), while another prune went to 3 steps
// and gc, 30 minutes on, deleted what that dropped. Resumed, the first
// prune put its base, 41, below the other's, 98: the session's history
// then ran into deleted steps and no longer read ("parent of d@66: read
// session d, step 65: not found"). A prune whose read is older than
// manifest.HeadTrust now reads the base again and does not lower it.
func TestPrunePausedDoesNotLowerTheBase(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	s, _ := ws.Session("d")
	for i := 1; i <= 100; i++ {
		if _, err := s.Commit(ctx, cairn.JSON(fmt.Appendf(nil, `{"i":%d}`, i)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now()
	paused := false
	hook := &listHook{Store: store}
	p1 := cairn.OpenStore(hook)
	cairn.SetClock(p1, func() time.Time {
		if paused {
			return t0.Add(manifest.HeadTrust + time.Minute)
		}
		return t0
	})
	hook.after = func() {
		paused = true
		if _, err := ws.Prune(ctx, "d", 3); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
		}
	}
	if _, err := p1.Prune(ctx, "d", 60); err != nil {
		t.Fatal(err)
	}
	fresh := cairn.OpenStore(store)
	head, err := fresh.ReadHead(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := head.Log(ctx, func(*cairn.Step) error { n++; return nil }); err != nil || n != 3 {
		t.Fatalf("log of d after the paused prune: %d steps, %v; want the 3 the later prune kept", n, err)
	}
}
