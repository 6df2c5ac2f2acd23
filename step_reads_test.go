package cairn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cairnlog/cairn"
)

// windowSession commits n steps to session "s" of a new workspace in dir,
// each state the step's number and its last 8 messages of about msg
// bytes (an agent that keeps a window of its conversation), and returns
// the steps.
func windowSession(tb testing.TB, dir string, n, msg int) []*cairn.Step {
	tb.Helper()
	ctx := context.Background()
	ws, err := cairn.Open(ctx, dir)
	if err != nil {
		tb.Fatal(err)
	}
	defer ws.Close()
	s, _ := ws.Session("s")
	steps := make([]*cairn.Step, 0, n)
	for i := 1; i <= n; i++ {
		st, err := s.Commit(ctx, cairn.JSON(windowState(i, msg)), cairn.CommitOptions{})
		if err != nil {
			tb.Fatal(err)
		}
		steps = append(steps, st)
	}
	return steps
}

// windowState is the state of step i of windowSession.
func windowState(i, msg int) []byte {
	var msgs []string
	for k := max(1, i-7); k <= i; k++ {
		m, _ := json.Marshal(fmt.Sprintf("message %d: %s", k, words(k, msg)))
		msgs = append(msgs, string(m))
	}
	return []byte(fmt.Sprintf(`{"step":%d,"messages":[%s]}`, i, strings.Join(msgs, ",")))
}

// readEveryStep reads the state of every step of session "s" of ws in
// order, and checks each against want (want[i] is step i+1's).
func readEveryStep(tb testing.TB, ws *cairn.Workspace, want [][]byte) {
	tb.Helper()
	ctx := context.Background()
	for i := range want {
		st, err := ws.ReadStep(ctx, "s", uint64(i+1))
		if err != nil {
			tb.Fatal(err)
		}
		doc, err := st.JSON(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		if string(doc) != string(want[i]) {
			tb.Fatalf("state of %s = %.60q…, want %.60q…", st, doc, want[i])
		}
	}
}

// windowStates returns the states of the n steps of windowSession.
func windowStates(n, msg int) [][]byte {
	want := make([][]byte, n)
	for i := range want {
		want[i] = windowState(i+1, msg)
	}
	return want
}

// TestReadingEachStepReadsEachObjectOnce: a reader of every step of a
// session in order (a replay, an export, a server answering for each
// step) loaded an index of each step's whole layout, reading again every
// object of it the object cache no longer held: with a cache smaller
// than the layout, N steps cost N layouts of reads. Reading step n after
// step n-1 must read only the objects new to the reader: about one GET
// per step for its step object, and its blobs.
func TestReadingEachStepReadsEachObjectOnce(t *testing.T) {
	ctx := context.Background()
	const n, msg = 300, 1000
	dir := t.TempDir()
	windowSession(t, dir, n, msg)

	ws, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ws.SetCacheLimit(64 << 10) // a few step objects, not the layout
	before := ws.Requests()
	readEveryStep(t, ws, windowStates(n, msg))
	gets := ws.Requests().Sub(before).Get
	t.Logf("reading %d steps: %d GETs", n, gets)
	if max := int64(n + 40); gets > max {
		t.Errorf("reading each of %d steps in order made %d GETs; want at most %d (the step object and the objects new to the reader)", n, gets, max)
	}
}

// TestConcurrentStepReaders: the tables Step.JSON reads through are the
// workspace's, shared by every reader (a server's requests): readers of
// different steps at once, through a cache too small for the layout,
// each read their own step's state.
func TestConcurrentStepReaders(t *testing.T) {
	ctx := context.Background()
	const n, msg, readers = 60, 500, 6
	dir := t.TempDir()
	steps := windowSession(t, dir, n, msg)
	ws, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ws.SetCacheLimit(16 << 10)
	var wg sync.WaitGroup
	errs := make(chan error, readers)
	for g := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range n {
				i := (k + g*7) % n
				st, err := ws.ReadStep(ctx, "s", steps[i].Number)
				if err != nil {
					errs <- err
					return
				}
				doc, err := st.JSON(ctx)
				if err == nil && string(doc) != string(windowState(i+1, msg)) {
					err = fmt.Errorf("state of %s = %.60q…", st, doc)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// BenchmarkReadEveryStep reads the state of every step of a 2,000-step
// session in order, through a fresh workspace with the default cache and
// with one that holds a few step objects.
func BenchmarkReadEveryStep(b *testing.B) {
	ctx := context.Background()
	const n, msg = 2000, 1000
	dir := b.TempDir()
	windowSession(b, dir, n, msg)
	want := windowStates(n, msg)
	for _, c := range []struct {
		name  string
		limit int64
	}{{"default-cache", 0}, {"64KiB-cache", 64 << 10}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var gets int64
			for b.Loop() {
				ws, err := cairn.Open(ctx, dir)
				if err != nil {
					b.Fatal(err)
				}
				ws.SetCacheLimit(c.limit)
				before := ws.Requests()
				readEveryStep(b, ws, want)
				gets += ws.Requests().Sub(before).Get
				ws.Close()
			}
			b.ReportMetric(float64(gets)/float64(b.N), "GETs/op")
		})
	}
}
