package cairn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestDiffEachStepReadsEachObjectOnce: a replay (or an export of an
// adapter's session) diffs each step with the one before it. Each Diff
// loaded an index of both steps' whole layouts, reading every object of
// them that the object cache no longer held: with a cache smaller than
// the layout (an export keeps 4 MiB), N steps cost N layouts of reads,
// and always N index builds growing with the layout. Diffing each of N
// steps with its parent must read each object about once: N GETs and a
// few more, whatever the cache holds.
func TestDiffEachStepReadsEachObjectOnce(t *testing.T) {
	ctx := context.Background()
	const n = 300
	dir := t.TempDir()
	ws, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ws.Session("s")
	for i := 1; i <= n; i++ {
		msg, _ := json.Marshal(fmt.Sprintf("message %d: %s", i, words(i, 1000)))
		var st cairn.State
		if i == 1 {
			st = cairn.JSON([]byte(fmt.Sprintf(`{"step":1,"messages":[%s]}`, msg)))
		} else {
			st = cairn.Patch([]byte(fmt.Sprintf(`[{"op":"replace","path":"/step","value":%d},{"op":"add","path":"/messages/-","value":%s}]`, i, msg)))
		}
		if _, err := s.Commit(ctx, st, cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ws.Close()

	// A fresh reader whose cache holds a few step objects, not the layout.
	r, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.SetCacheLimit(64 << 10)
	var steps []*cairn.Step
	head, err := r.ReadStep(ctx, "s", n)
	if err != nil {
		t.Fatal(err)
	}
	if err := head.Log(ctx, func(st *cairn.Step) error { steps = append(steps, st); return nil }); err != nil {
		t.Fatal(err)
	}
	before := r.Requests()
	for i := len(steps) - 1; i > 0; i-- {
		a, b := steps[i], steps[i-1]
		ch, err := r.Diff(ctx, a, b)
		if err != nil {
			t.Fatal(err)
		}
		want := []cairn.Change{{Path: "/step", Kind: cairn.Changed}, {Path: "/messages/" + fmt.Sprint(a.Number), Kind: cairn.Added}}
		if fmt.Sprint(ch) != fmt.Sprint(want) {
			t.Fatalf("diff %s %s = %v, want %v", a, b, ch, want)
		}
	}
	gets := r.Requests().Sub(before).Get
	t.Logf("%d diffs: %d GETs", n-1, gets)
	if max := int64(n + 40); gets > max {
		t.Errorf("diffing each of %d steps with its parent made %d GETs; want at most %d (about one per step object)", n, gets, max)
	}
}

// words returns n bytes of text that zstd cannot shrink much, the same
// for the same seed.
func words(seed, n int) string {
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + rng.IntN(26))
	}
	return string(b)
}

// TestDiffConcurrentReaders: the blob tables and hints Diff reads through
// are shared by every reader of the workspace (a server's requests, an
// export's workers): diffs running at once, over a cache too small for
// the layout, all see their own steps' changes.
func TestDiffConcurrentReaders(t *testing.T) {
	ctx := context.Background()
	const n, readers = 60, 6
	ws, err := cairn.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ws.SetCompactionFanout(4)
	s, _ := ws.Session("s")
	steps := make([]*cairn.Step, 0, n)
	for i := 1; i <= n; i++ {
		msg, _ := json.Marshal(words(i, 3000))
		st := cairn.Patch([]byte(fmt.Sprintf(`[{"op":"add","path":"/-","value":%s}]`, msg)))
		if i == 1 {
			st = cairn.JSON([]byte(fmt.Sprintf(`[%s]`, msg)))
		}
		step, err := s.Commit(ctx, st, cairn.CommitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, step)
	}
	ws.SetCacheLimit(16 << 10)
	errs := make(chan error, readers)
	for g := range readers {
		go func() {
			for k := range n - 1 {
				i := (k + g*7) % (n - 1)
				ch, err := ws.Diff(ctx, steps[i], steps[i+1])
				if err == nil && (len(ch) != 1 || ch[0] != (cairn.Change{Path: fmt.Sprintf("/%d", i+1), Kind: cairn.Added})) {
					err = fmt.Errorf("diff %s %s = %v", steps[i], steps[i+1], ch)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range readers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
