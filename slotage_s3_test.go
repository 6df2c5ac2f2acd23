package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/internal/s3test"
	"github.com/cairnlog/cairn/manifest"
)

// openMinIOURL opens prefix of bucket b through its minio:// URL, as a
// program would (the backend under the request counter and the retry
// wrapper), with the server's credentials in the environment.
func openMinIOURL(t *testing.T, b *s3test.Bucket, prefix string) *cairn.Workspace {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", b.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", b.SecretKey)
	ws, err := cairn.Open(context.Background(), fmt.Sprintf("minio://%s/%s/%s?secure=false&region=%s", b.Host, b.Name, prefix, b.Region))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

// slotDoc is step i's state in the tests below.
func slotDoc(i int) []byte {
	return []byte(fmt.Sprintf(`{"i":%d,"note":%q}`, i, strings.Repeat(fmt.Sprint(i), 100)))
}

func commitSlots(t *testing.T, s *cairn.Session, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		if _, err := s.Commit(context.Background(), cairn.JSON(slotDoc(i)), cairn.CommitOptions{}); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
}

// TestStaleWriterMinIO is TestStaleWriterAfterGC on a real MinIO server,
// where gc judges a step object's age by its LastModified: writer B holds
// step 5 as its head; A takes the session to step 40 (past a compaction,
// so the pruned steps are named by no live layout) and prunes it to its
// last 3 steps; gc runs twice. Either gc's clock is SlotFenceAge on and
// it deletes slot 6, and B's clock is past HeadTrust, so B reads the head
// first; or neither clock moved and slot 6 is still there. B's commit is
// a conflict both ways, the head stays at 40 and slot 6 stays as gc left
// it.
func TestStaleWriterMinIO(t *testing.T) {
	b := s3test.StartMinIO(t)
	for _, aged := range []bool{true, false} {
		t.Run(fmt.Sprintf("aged=%v", aged), func(t *testing.T) {
			ctx := context.Background()
			prefix := fmt.Sprintf("stale-%v", aged)
			raw := openMinIOStore(t, b, prefix)
			wsA := openMinIOURL(t, b, prefix)
			a := mustSession(t, wsA, "d")
			commitSlots(t, a, 1, 5)
			wsB := openMinIOURL(t, b, prefix)
			sb := mustSession(t, wsB, "d")
			if h, err := sb.Head(ctx); err != nil || h.Number != 5 {
				t.Fatalf("B's head: %v, %v", h, err)
			}
			commitSlots(t, a, 6, 40)
			if _, err := wsA.Prune(ctx, "d", 3); err != nil {
				t.Fatal(err)
			}
			opts := cairn.GCOptions{Grace: 0}
			if aged {
				later := time.Now().Add(manifest.SlotFenceAge + time.Minute)
				opts.Now = later
				cairn.SetClock(wsB, func() time.Time { return later })
			}
			wsG := openMinIOURL(t, b, prefix)
			var deleted, young int
			for range 2 {
				rep, err := wsG.GC(ctx, opts)
				if err != nil {
					t.Fatal(err)
				}
				deleted, young = rep.Deleted, rep.YoungSteps
			}
			_, slotErr := raw.Stat(ctx, manifest.StepKey("d", 6))
			if aged && (deleted == 0 || !errors.Is(slotErr, cas.ErrNotFound)) {
				t.Fatalf("gc SlotFenceAge later deleted %d objects, slot 6: %v; want it deleted", deleted, slotErr)
			}
			if !aged && (deleted != 0 || young == 0 || slotErr != nil) {
				t.Fatalf("gc at once deleted %d objects (%d young steps), slot 6: %v; want the young steps kept", deleted, young, slotErr)
			}
			t.Logf("second gc: %d deleted, %d young steps", deleted, young)

			before := wsB.Requests()
			st, err := sb.Commit(ctx, cairn.JSON(slotDoc(99)), cairn.CommitOptions{})
			if !errors.Is(err, cairn.ErrConflict) {
				t.Fatalf("B's commit: %v, %v; want a conflict", st, err)
			}
			t.Logf("B's commit: %v (requests %+v)", err, wsB.Requests().Sub(before))
			if h, err := wsA.ReadHead(ctx, "d"); err != nil || h.Number != 40 {
				t.Fatalf("head after B's commit: %v, %v; want step 40", h, err)
			}
			if _, err := raw.Stat(ctx, manifest.StepKey("d", 6)); aged != errors.Is(err, cas.ErrNotFound) {
				t.Fatalf("slot 6 after B's commit: %v; want it as gc left it", err)
			}
			// B's next commit starts from the store's head.
			if st, err := sb.Commit(ctx, cairn.JSON(slotDoc(41)), cairn.CommitOptions{}); err != nil || st.Number != 41 {
				t.Fatalf("B's commit after the conflict: %v, %v; want step 41", st, err)
			}
		})
	}
}

// TestHeadTrustRequestsMinIO: a live session that commits steadily makes
// exactly one PUT per step (two on a step divisible by 32: the head
// hint) and no GET, LIST or HEAD, compactions included; after an idle
// spell longer than HeadTrust its next commit reads the head once (the
// hint and one LIST), and the ones after it read nothing again; an idle
// spell just under HeadTrust costs nothing.
func TestHeadTrustRequestsMinIO(t *testing.T) {
	ctx := context.Background()
	b := s3test.StartMinIO(t)
	ws := openMinIOURL(t, b, "requests")
	var mu sync.Mutex
	var offset time.Duration
	cairn.SetClock(ws, func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(offset) })
	idle := func(d time.Duration) { mu.Lock(); offset += d; mu.Unlock() }
	s := mustSession(t, ws, "d")
	commitSlots(t, s, 1, 1) // the session's first step reads the store
	step := func(i int) cairn.Requests {
		t.Helper()
		before := ws.Requests()
		st, err := s.Commit(ctx, cairn.JSON(slotDoc(i)), cairn.CommitOptions{})
		if err != nil || st.Number != uint64(i) {
			t.Fatalf("commit %d: %v, %v", i, st, err)
		}
		return ws.Requests().Sub(before)
	}
	puts := func(i int) int64 {
		if i%manifest.HintEvery == 0 {
			return 2
		}
		return 1
	}
	i := 1
	var steady cairn.Requests
	for i < 100 {
		i++
		used := step(i)
		steady.Put += used.Put
		steady.Get += used.Get
		steady.List += used.List
		steady.Head += used.Head
		if used.Put != puts(i) || used.Get != 0 || used.List != 0 || used.Head != 0 || used.Delete != 0 {
			t.Errorf("steady commit %d: %+v; want %d PUT and nothing else", i, used, puts(i))
		}
	}
	t.Logf("steps 2..%d, committed steadily: %d PUT, %d GET, %d LIST, %d HEAD", i, steady.Put, steady.Get, steady.List, steady.Head)

	for _, spell := range []struct {
		idle  time.Duration
		reads bool
	}{
		{manifest.HeadTrust + time.Minute, true},
		{0, false},
		{manifest.HeadTrust - time.Minute, false},
		{time.Minute, false}, // the last commit confirmed the head
		{2 * manifest.HeadTrust, true},
		{0, false},
	} {
		idle(spell.idle)
		i++
		used := step(i)
		t.Logf("commit %d after %v idle: %d PUT, %d GET, %d LIST, %d HEAD", i, spell.idle, used.Put, used.Get, used.List, used.Head)
		reads := used.Get + used.List + used.Head
		switch {
		case used.Put != puts(i) || used.Delete != 0:
			t.Errorf("commit %d after %v idle: %+v; want %d PUT", i, spell.idle, used, puts(i))
		case spell.reads && (used.List != 1 || used.Get > 1 || used.Head != 0):
			t.Errorf("commit %d after %v idle: %+v; want one head read (a LIST and at most the hint's GET)", i, spell.idle, used)
		case !spell.reads && reads != 0:
			t.Errorf("commit %d after %v idle: %+v; want no read", i, spell.idle, used)
		}
	}
}
