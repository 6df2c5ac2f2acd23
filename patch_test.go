package cairn_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/rusage"
)

// stepOf commits state and fails the test on error.
func stepOf(t *testing.T, s *cairn.Session, state cairn.State) *cairn.Step {
	t.Helper()
	st, err := s.Commit(context.Background(), state, cairn.CommitOptions{})
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	return st
}

func stepJSON(t *testing.T, st *cairn.Step) []byte {
	t.Helper()
	got, err := st.JSON(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestCommitPatch: a patch stores what committing the patched document
// stores (the same root, the same bytes), through a writer that holds
// the document and through one that must read it first.
func TestCommitPatch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ws, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	patched, _ := ws.Session("patch")
	whole, _ := ws.Session("whole")
	doc := appendState(30)
	stepOf(t, patched, cairn.JSON(doc))
	stepOf(t, whole, cairn.JSON(doc))
	for n := 31; n <= 40; n++ {
		msg := fmt.Sprintf(`{"role":"assistant","content":"step %d %s"}`, n, strings.Repeat(fmt.Sprintf("tok%d ", n), 500))
		ops := fmt.Sprintf(`[{"op":"add","path":"/messages/-","value":%s},
			{"op":"replace","path":"/scratchpad","value":"thinking about step %d"},
			{"op":"replace","path":"/plan/done","value":%d},{"op":"replace","path":"/plan/next","value":"step %d"}]`, msg, n, n, n+1)
		p := stepOf(t, patched, cairn.Patch([]byte(ops)))
		w := stepOf(t, whole, cairn.JSON(appendState(n)))
		if got := stepJSON(t, p); !bytes.Equal(got, appendState(n)) {
			t.Fatalf("step %d: patched document differs from the whole one", n)
		}
		if a, b := cairn.StepManifest(p).Root, cairn.StepManifest(w).Root; !a.Equal(b) {
			t.Fatalf("step %d: patch root %v, whole document root %v", n, a, b)
		}
		if p.StoredBytes != w.StoredBytes {
			t.Fatalf("step %d: patch stored %d bytes, the whole document %d", n, p.StoredBytes, w.StoredBytes)
		}
	}
	// A writer in a fresh workspace reads the head's document first.
	ws2, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := ws2.Session("patch")
	st := stepOf(t, fresh, cairn.Patch([]byte(`[{"op":"remove","path":"/messages/0"}]`)))
	first := fmt.Sprintf(`{"role":"assistant","content":"step 1 %s"},`, strings.Repeat("tok1 ", 500))
	if got, want := stepJSON(t, st), strings.Replace(string(appendState(40)), first, "", 1); string(got) != want {
		t.Fatalf("patched document after a fresh resume is wrong")
	}
	if st.Number != 12 {
		t.Fatalf("fresh patch made step %d, want 12", st.Number)
	}
}

// TestCommitPatchFails: a patch that fails commits nothing, says which
// operation failed in the patch's words, and leaves the writer able to
// commit the next patch against the same head.
func TestCommitPatchFails(t *testing.T) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ws.Session("s")
	if _, err := s.Commit(ctx, cairn.Patch([]byte(`[]`)), cairn.CommitOptions{}); !errors.Is(err, cairn.ErrInvalid) {
		t.Fatalf("patch of an empty session = %v, want ErrInvalid", err)
	}
	stepOf(t, s, cairn.JSON([]byte(`{"messages":[1,2,3,4,5],"n":0}`)))
	_, err = s.Commit(ctx, cairn.Patch([]byte(`[{"op":"replace","path":"/n","value":1},{"op":"remove","path":"/messages/7"}]`)), cairn.CommitOptions{})
	if !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), "patch op 2 (remove /messages/7): no element 7 (the array has 5)") {
		t.Fatalf("failed patch error = %v", err)
	}
	head, err := s.Head(ctx)
	if err != nil || head.Number != 1 {
		t.Fatalf("head after a failed patch = %v, %v; want step 1", head, err)
	}
	st := stepOf(t, s, cairn.Patch([]byte(`[{"op":"add","path":"/messages/-","value":6}]`)))
	if got := string(stepJSON(t, st)); got != `{"messages":[1,2,3,4,5,6],"n":0}` {
		t.Fatalf("patch after a failed one = %s", got)
	}
	// A writer that lost a race patches the new head, not its stale copy.
	other, _ := ws.Session("s")
	if _, err := other.Head(ctx); err != nil {
		t.Fatal(err)
	}
	stepOf(t, s, cairn.Patch([]byte(`[{"op":"replace","path":"/n","value":7}]`)))
	stale := cairn.ExpectHead(2)
	if _, err := other.Commit(ctx, cairn.Patch([]byte(`[{"op":"remove","path":"/messages/0"}]`)), cairn.CommitOptions{Expect: stale}); !errors.Is(err, cairn.ErrConflict) {
		t.Fatalf("stale patch = %v, want ErrConflict", err)
	}
	st = stepOf(t, other, cairn.Patch([]byte(`[{"op":"remove","path":"/messages/0"}]`)))
	if got := string(stepJSON(t, st)); got != `{"messages":[2,3,4,5,6],"n":7}` {
		t.Fatalf("patch after a lost race = %s", got)
	}
}

// allocated returns the bytes allocated while fn runs.
func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestCommitCostFollowsChange (issue 14): committing a 4.5 MB document
// that gained one message must not process the whole document again.
// Its memory allocated is the observable: a full re-parse copies the
// whole document.
func TestCommitCostFollowsChange(t *testing.T) {
	if raceEnabled {
		// The race detector's instrumentation allocates beside the
		// commit's own (1 run in 3 went over the bound so, on code old
		// and new): the bound is a property of the commit, measured
		// without it.
		t.Skip("allocation bound measured without the race detector")
	}
	ctx := context.Background()
	ws, err := cairn.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ws.Session("chat")
	const n = 1000 // about 4.5 MB
	stepOf(t, s, cairn.JSON(appendState(n-2)))
	stepOf(t, s, cairn.JSON(appendState(n-1)))
	// The allocation counter is the process's: a collection that empties
	// a sync.Pool mid-commit, or another goroutine, can add a few hundred
	// KB to one step (1 run in 6 failed so). A commit that processes the
	// whole document again allocates at least its size every time, so the
	// least of three steps tells the two apart.
	var doc []byte
	got := uint64(math.MaxUint64)
	for i := range 3 {
		doc = appendState(n + i)
		got = min(got, allocated(func() { stepOf(t, s, cairn.JSON(doc)) }))
	}
	if limit := uint64(len(doc) / 8); got > limit {
		t.Fatalf("committing one more message to a %d-byte document allocated %d bytes, want at most %d", len(doc), got, limit)
	}
	ops := []byte(`[{"op":"add","path":"/messages/-","value":{"role":"user","content":"one more"}},{"op":"replace","path":"/scratchpad","value":"x"}]`)
	got = math.MaxUint64
	for range 3 {
		got = min(got, allocated(func() { stepOf(t, s, cairn.Patch(ops)) }))
	}
	if limit := uint64(len(doc) / 8); got > limit {
		t.Fatalf("a patch of a %d-byte document allocated %d bytes, want at most %d", len(doc), got, limit)
	}
}

// sizedState returns appendState(n) for the smallest n whose document
// is at least size bytes.
func sizedState(size int) (doc []byte, n int) {
	for n = max(1, size/4600); ; n++ {
		if doc = appendState(n); len(doc) >= size {
			return doc, n
		}
	}
}

// BenchmarkCommitPatch (issue 14, target 2): one step of the append
// workload as a JSON Patch through a live session on an in-memory store
// (the fsync aside), at three state sizes. cpu-ns/op is the process's
// CPU time per step, GC included; the target is under 0.5 ms at any size.
func BenchmarkCommitPatch(b *testing.B) {
	for _, size := range []int{10 << 10, 1 << 20, 10 << 20} {
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			ctx := context.Background()
			ws, err := cairn.Open(ctx, "mem://")
			if err != nil {
				b.Fatal(err)
			}
			s, _ := ws.Session("bench")
			doc, n := sizedState(size)
			if _, err := s.Commit(ctx, cairn.JSON(doc), cairn.CommitOptions{}); err != nil {
				b.Fatal(err)
			}
			cpu0 := processCPU()
			for b.Loop() {
				n++
				ops := fmt.Sprintf(`[{"op":"add","path":"/messages/-","value":{"role":"assistant","content":"step %d %s"}},{"op":"replace","path":"/scratchpad","value":"thinking about step %d"}]`,
					n, strings.Repeat("tok ", 250), n)
				if _, err := s.Commit(ctx, cairn.Patch([]byte(ops)), cairn.CommitOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

func processCPU() time.Duration { return rusage.SelfCPU() }

// TestCommitPatchCopiesBounded: a patch of 60 copies of the whole
// document, 2 KB of input, asked for 2^60 times the document: `cairn
// commit --patch` (and the HTTP API and MCP, through the same Commit)
// built it until the machine's memory ran out. It is refused as bad
// input, at once, naming the operation; past the workspace's
// MaxValueBytes a patch is a limit error, as a read of the state would
// be; and the head stays where it was.
func TestCommitPatchCopiesBounded(t *testing.T) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	s, _ := ws.Session("s")
	stepOf(t, s, cairn.JSON([]byte(`{"a":"`+strings.Repeat("x", 1000)+`"}`)))
	var ops []string
	for i := range 60 {
		ops = append(ops, fmt.Sprintf(`{"op":"copy","from":"","path":"/k%d"}`, i))
	}
	copies := cairn.Patch([]byte("[" + strings.Join(ops, ",") + "]"))
	_, err = s.Commit(ctx, copies, cairn.CommitOptions{})
	if !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), "one patch may at most double a document") {
		t.Fatalf("60 copies of the document = %v; want ErrInvalid saying a patch may at most double it", err)
	}
	l := ws.Limits()
	l.MaxValueBytes = 1500
	if err := ws.SetLimits(l); err != nil {
		t.Fatal(err)
	}
	_, err = s.Commit(ctx, cairn.Patch([]byte(`[{"op":"copy","from":"","path":"/again"}]`)), cairn.CommitOptions{})
	if !errors.Is(err, cairn.ErrLimit) || !strings.Contains(cairn.LimitHint(err), "MaxValueBytes") {
		t.Fatalf("a copy past MaxValueBytes = %v (hint %q); want ErrLimit naming MaxValueBytes", err, cairn.LimitHint(err))
	}
	if head, err := s.Head(ctx); err != nil || head.Number != 1 {
		t.Fatalf("head after refused patches = %v, %v; want step 1", head, err)
	}
}
