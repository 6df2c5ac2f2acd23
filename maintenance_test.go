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
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// gcState returns the JSON state of step n of a loop named tag: a message
// list that grows, and a config that cycles through three large values, so
// that later steps deduplicate against blobs only old steps used.
func gcState(tag string, n int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"tag":%q,"messages":[`, tag)
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"role":"assistant","content":"%s step %d %s"}`, tag, i, strings.Repeat("lorem ipsum ", 40))
	}
	fmt.Fprintf(&b, `],"config":"%s","step":%d}`, strings.Repeat(fmt.Sprintf("variant-%d ", n%3), 30), n)
	return []byte(b.String())
}

func commitN(t *testing.T, ws *cairn.Workspace, name, tag string, from, to int) *cairn.Step {
	t.Helper()
	s, err := ws.Session(name)
	if err != nil {
		t.Fatal(err)
	}
	var st *cairn.Step
	for n := from; n <= to; n++ {
		if st, err = s.Commit(context.Background(), cairn.JSON(gcState(tag, n)), cairn.CommitOptions{}); err != nil {
			t.Fatalf("commit %s step %d: %v", name, n, err)
		}
	}
	return st
}

func logOf(t *testing.T, ws *cairn.Workspace, name string) []string {
	t.Helper()
	s, _ := ws.Session(name)
	var out []string
	err := s.Log(context.Background(), func(st *cairn.Step) error {
		e := st.String()
		if st.Truncated {
			e += "(truncated)"
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		t.Fatalf("log %s: %v", name, err)
	}
	return out
}

func mustVerify(t *testing.T, ws *cairn.Workspace) *cairn.VerifyReport {
	t.Helper()
	rep, err := ws.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		t.Errorf("verify: %s", p)
	}
	if t.Failed() {
		t.FailNow()
	}
	return rep
}

func mustGC(t *testing.T, ws *cairn.Workspace, opts cairn.GCOptions) *cairn.GCReport {
	t.Helper()
	rep, err := ws.GC(context.Background(), opts)
	if err != nil {
		t.Fatalf("gc: %v", err)
	}
	return rep
}

// checkState reads session@n and compares it with the state committed.
func checkState(t *testing.T, ws *cairn.Workspace, ref string, want []byte) {
	t.Helper()
	st, err := ws.Resolve(context.Background(), ref)
	if err != nil {
		t.Fatalf("resolve %s: %v", ref, err)
	}
	got, err := st.JSON(context.Background())
	if err != nil {
		t.Fatalf("read %s: %v", ref, err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s: state differs from what was committed", ref)
	}
}

// TestPruneKeepsForks prunes a session whose past a fork shares: the
// pruned session's history ends at its base, the fork's history and every
// state stay readable, GC deletes nothing anyone needs, and both sessions
// go on committing.
func TestPruneKeepsForks(t *testing.T) {
	ctx := context.Background()
	testPruneKeepsForks(t, cairn.OpenStore(mem.New()))
	_ = ctx
}

func testPruneKeepsForks(t *testing.T, ws *cairn.Workspace) {
	ctx := context.Background()
	commitN(t, ws, "main", "main", 1, 20)
	s8, err := ws.Resolve(ctx, "main@8")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Fork(ctx, s8, "alt"); err != nil {
		t.Fatal(err)
	}
	commitN(t, ws, "alt", "alt", 9, 13)

	res, err := ws.Prune(ctx, "main", 3)
	if err != nil {
		t.Fatal(err)
	}
	if res.NewBase != 18 || res.Steps != 17 || res.Head != 20 {
		t.Fatalf("prune = %+v, want base 18, 17 steps pruned", res)
	}
	if got := logOf(t, ws, "main"); strings.Join(got, " ") != "main@20 main@19 main@18(truncated)" {
		t.Fatalf("main's log after prune = %v", got)
	}
	if _, err := ws.Resolve(ctx, "main@5"); !errors.Is(err, cairn.ErrNotFound) {
		t.Fatalf("main@5 after prune: %v, want not found", err)
	}
	if got := logOf(t, ws, "alt"); len(got) != 13 || got[0] != "alt@13" || got[5] != "alt@8" || got[6] != "main@7" || got[12] != "main@1" {
		t.Fatalf("alt's log after pruning main = %v", got)
	}
	// Pruning again to a longer history changes nothing.
	if res, err := ws.Prune(ctx, "main", 5); err != nil || res.Steps != 0 || res.NewBase != 18 {
		t.Fatalf("second prune = %+v, %v", res, err)
	}
	for i := 0; i < 3; i++ {
		mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
	}
	mustVerify(t, ws)
	for n := 18; n <= 20; n++ {
		checkState(t, ws, fmt.Sprintf("main@%d", n), gcState("main", n))
	}
	for n := 9; n <= 13; n++ {
		checkState(t, ws, fmt.Sprintf("alt@%d", n), gcState("alt", n))
	}
	checkState(t, ws, "alt@8", gcState("main", 8))
	// Both go on: main re-uses a config value only pruned steps held.
	commitN(t, ws, "main", "main", 21, 24)
	commitN(t, ws, "alt", "alt", 14, 15)
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
	mustVerify(t, ws)
	checkState(t, ws, "main", gcState("main", 24))
	checkState(t, ws, "alt", gcState("alt", 15))

	// Pruning the fork below its fork point cuts its own view only.
	if _, err := ws.Prune(ctx, "alt", 2); err != nil {
		t.Fatal(err)
	}
	if got := logOf(t, ws, "alt"); strings.Join(got, " ") != "alt@15 alt@14(truncated)" {
		t.Fatalf("alt's log after its own prune = %v", got)
	}
}

// TestRemoveAndGC removes sessions and checks the two-phase sweep: the
// first run only records candidates, a dry run deletes nothing, the
// second deletes what no live step needs, a fork keeps what it shares,
// and a name starts afresh once swept.
func TestRemoveAndGC(t *testing.T) {
	testRemoveAndGC(t, cairn.OpenStore(mem.New()))
}

func testRemoveAndGC(t *testing.T, ws *cairn.Workspace) {
	ctx := context.Background()
	commitN(t, ws, "a", "a", 1, 12)
	commitN(t, ws, "b", "b", 1, 12)
	a5, _ := ws.Resolve(ctx, "a@5")
	if _, err := ws.Fork(ctx, a5, "c"); err != nil {
		t.Fatal(err)
	}
	commitN(t, ws, "c", "c", 6, 8)
	before, err := ws.Usage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if before.GarbageObjects != 0 || len(before.Sessions) != 3 {
		t.Fatalf("usage before = %+v", before)
	}

	if _, err := ws.Remove(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Resolve(ctx, "a"); !errors.Is(err, cairn.ErrNotFound) {
		t.Fatalf("head of a removed session: %v", err)
	}
	if _, err := ws.Remove(ctx, "a"); !errors.Is(err, cairn.ErrNotFound) {
		t.Fatalf("removing twice: %v", err)
	}
	r1 := mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
	if r1.Deleted != 0 || r1.Candidates != 7 || r1.Tombstones != 0 {
		// a@6..12 are garbage: c uses a@1..5. Remove fenced a@13.
		t.Fatalf("first run = %+v, want 7 candidates, nothing deleted, no fence of its own", r1)
	}
	dry := mustGC(t, ws, cairn.GCOptions{Grace: 0, DryRun: true, Now: slotsAged})
	if dry.Deleted != 7 {
		t.Fatalf("dry run = %+v, want 7 that would go", dry)
	}
	r2 := mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
	if r2.Deleted != 7 || r2.Tombstones != 0 || r2.DeletedBytes != r1.CandidateBytes {
		t.Fatalf("second run = %+v, want the 7 candidates (%d bytes) gone", r2, r1.CandidateBytes)
	}
	if r := mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged}); r.Deleted != 0 || r.Candidates != 0 {
		t.Fatalf("third run = %+v, want nothing left to do", r)
	}
	mustVerify(t, ws)
	checkState(t, ws, "c@5", gcState("a", 5))
	checkState(t, ws, "c", gcState("c", 8))
	if got := logOf(t, ws, "c"); len(got) != 8 || got[4] != "a@4" {
		t.Fatalf("c's log = %v", got)
	}

	if _, err := ws.Remove(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
	r4 := mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
	after, err := ws.Usage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.GarbageObjects != 0 || after.Objects != 14 || len(after.Sessions) != 1 {
		t.Fatalf("usage after = %+v, want b's 12 step objects and 2 tombstones", after)
	}
	t.Logf("reclaimed %d + %d bytes; store %d -> %d bytes; gc runs took %v, %v", r2.DeletedBytes, r4.DeletedBytes, before.Bytes, after.Bytes, r2.Duration, r4.Duration)
	mustVerify(t, ws)
	for _, name := range []string{"a", "c"} {
		if _, err := ws.Resolve(ctx, name); !errors.Is(err, cairn.ErrNotFound) {
			t.Fatalf("%s after the sweep: %v", name, err)
		}
	}
	// The name starts afresh, above its tombstone.
	st := commitN(t, ws, "a", "new-a", 1, 2)
	// Its history begins at its first new step: what came before was a
	// removed session's, not pruned history.
	if got := logOf(t, ws, "a"); st.Number != 15 || strings.Join(got, " ") != "a@15 a@14" {
		t.Fatalf("reused name: step %d, log %v", st.Number, got)
	}
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
	if got := logOf(t, ws, "a"); strings.Join(got, " ") != "a@15 a@14" {
		t.Fatalf("reused name after gc: log %v", got)
	}
	checkState(t, ws, "a", gcState("new-a", 2))
	checkState(t, ws, "b", gcState("b", 12))
}

// TestGCGrace: an unreachable object goes only when a run found it so at
// least the grace period ago and it is at least that old.
func TestGCGrace(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	commitN(t, ws, "x", "x", 1, 3)
	commitN(t, ws, "keep", "keep", 1, 1)
	if _, err := ws.Remove(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	g := cairn.GCOptions{Grace: time.Hour, Now: t0}
	if r := mustGC(t, ws, g); r.Candidates != 3 || r.Deleted != 0 || r.Tombstones != 0 { // Remove fenced x@4
		t.Fatalf("run 1 = %+v", r)
	}
	g.Now = t0.Add(30 * time.Minute)
	if r := mustGC(t, ws, g); r.Deleted != 0 {
		t.Fatalf("run 2 inside the grace period deleted %d", r.Deleted)
	}
	g.Now = t0.Add(61 * time.Minute)
	if r := mustGC(t, ws, g); r.Deleted != 3 {
		t.Fatalf("run 3 after the grace period = %+v", r)
	}
	// A fresh object is not deleted even if it was a candidate long ago.
	commitN(t, ws, "y", "y", 1, 1)
	if _, err := ws.Remove(ctx, "y"); err != nil {
		t.Fatal(err)
	}
	g = cairn.GCOptions{Grace: time.Hour, Now: time.Now()}
	mustGC(t, ws, g)
	g.Now = g.Now.Add(2 * time.Hour)
	if r := mustGC(t, ws, g); r.Deleted != 1 {
		t.Fatalf("after two hours = %+v", r)
	}
	mustVerify(t, ws)
}

// TestGCRefusesUnreadableHistory: a live step that cannot be read stops
// the run before anything is deleted.
func TestGCRefusesUnreadableHistory(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	commitN(t, ws, "x", "x", 1, 4)
	commitN(t, ws, "gone", "gone", 1, 2)
	if _, err := ws.Remove(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
	key := "steps/x/00000000000000000002"
	data, _ := store.Get(ctx, key, 0, -1)
	data[14] ^= 1 // inside the manifest: the mark must notice
	if err := store.Put(ctx, key, data, cas.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := ws.GC(ctx, cairn.GCOptions{Grace: 0, Now: slotsAged})
	if !errors.Is(err, cas.ErrCorrupt) || !strings.Contains(err.Error(), "nothing deleted") {
		t.Fatalf("gc over a corrupt live step: %v", err)
	}
	if _, err := store.Stat(ctx, "steps/gone/00000000000000000001"); err != nil {
		t.Fatalf("gc deleted a candidate after a failed mark: %v", err)
	}
}

// TestUsage checks du's accounting on a session and its fork.
func TestUsage(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	commitN(t, ws, "p", "p", 1, 10)
	p4, _ := ws.Resolve(ctx, "p@4")
	if _, err := ws.Fork(ctx, p4, "q"); err != nil {
		t.Fatal(err)
	}
	commitN(t, ws, "q", "q", 5, 6)
	u, err := ws.Usage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Sessions) != 2 {
		t.Fatalf("usage = %+v", u)
	}
	p, q := u.Sessions[0], u.Sessions[1]
	if p.Steps != 10 || q.Steps != 6 || p.Objects != 10 || q.Objects != 7 {
		t.Fatalf("p = %+v, q = %+v", p, q)
	}
	if p.SharedBytes != q.SharedBytes || p.UniqueBytes+p.SharedBytes != p.StoredBytes || u.Bytes != p.StoredBytes+q.UniqueBytes {
		t.Fatalf("shared accounting: p = %+v, q = %+v, total %d", p, q, u.Bytes)
	}
	var logical int64
	for n := 1; n <= 10; n++ {
		logical += int64(len(gcState("p", n)))
	}
	// Node bytes differ from JSON text, but not by much.
	if p.LogicalBytes < logical*8/10 || p.LogicalBytes > logical*12/10 {
		t.Fatalf("p's logical bytes %d, JSON text %d", p.LogicalBytes, logical)
	}
	if p.DedupRatio <= 1 {
		t.Fatalf("dedup ratio %v", p.DedupRatio)
	}
	t.Logf("p: %+v", p)
	t.Logf("q: %+v", q)
	if one, err := ws.Usage(ctx, "q"); err != nil || len(one.Sessions) != 1 || one.Sessions[0] != q {
		t.Fatalf("usage of q = %+v, %v", one, err)
	}
	if _, err := ws.Usage(ctx, "nope"); !errors.Is(err, cairn.ErrNotFound) {
		t.Fatalf("usage of a missing session: %v", err)
	}
}

// TestGCCommitAfterFence: a removal fences the slot above the removed
// head; a commit to the name after the first gc run goes above the
// fence, builds on nothing, and the old steps are swept beneath it.
func TestGCCommitAfterFence(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	commitN(t, ws, "r", "r", 1, 5)
	if _, err := ws.Remove(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if r := mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged}); r.Candidates != 5 || r.Tombstones != 0 {
		t.Fatalf("run 1 = %+v", r)
	}
	st := commitN(t, ws, "r", "r", 6, 7)
	if st.Number != 8 {
		t.Fatalf("commit after rm and gc got step %d, want 8 (above the fence at 6)", st.Number)
	}
	if r := mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged}); r.Deleted != 5 {
		t.Fatalf("run 2 = %+v, want the 5 old steps deleted", r)
	}
	mustVerify(t, ws)
	checkState(t, ws, "r", gcState("r", 7))
	if got := logOf(t, ws, "r"); strings.Join(got, " ") != "r@8 r@7" {
		t.Fatalf("log = %v", got)
	}
}

// TestVerifyForkBelowBase: a fork's history may go below its origin's
// base; verify walks it even when the origin (walked first) stopped there.
func TestVerifyForkBelowBase(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	commitN(t, ws, "main", "main", 1, 20)
	s19, _ := ws.Resolve(ctx, "main@19")
	if _, err := ws.Fork(ctx, s19, "zfork"); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Prune(ctx, "main", 3); err != nil {
		t.Fatal(err)
	}
	rep := mustVerify(t, ws)
	// main@20..18, then zfork@19 and, through it, main@17..1.
	if rep.Steps != 21 {
		t.Fatalf("verify checked %d steps, want 21", rep.Steps)
	}
	if got := logOf(t, ws, "zfork"); len(got) != 19 {
		t.Fatalf("zfork's log has %d steps, want 19", len(got))
	}
}

// afterList runs fn once, right after the first listing of prefix.
type afterList struct {
	cas.Store
	prefix string
	once   sync.Once
	fn     func()
}

func (a *afterList) List(ctx context.Context, prefix, after string, fn func(cas.Info) error) error {
	err := a.Store.List(ctx, prefix, after, fn)
	if prefix == a.prefix {
		a.once.Do(a.fn)
	}
	return err
}

// beforePut runs fn once, right before the first put of key.
type beforePut struct {
	cas.Store
	key  string
	once sync.Once
	fn   func()
}

func (b *beforePut) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	if key == b.key {
		b.once.Do(b.fn)
	}
	return b.Store.Put(ctx, key, data, opts)
}

// TestGCStopsForRevivedSession: a session removed by a cairn before
// Remove fenced it itself (its base raised above its head, no tombstone)
// is fenced by gc; a commit to it that lands after the run's mark and
// before that fence builds on the old head and needs its objects: the
// fence loses, and the run deletes nothing. (A commit that lands before
// the mark reads the session is seen by it: TestGCRevivedBeforeMark.)
func TestGCStopsForRevivedSession(t *testing.T) {
	ws, rep := gcBesideRevived(t)
	if rep.Deleted != 0 || rep.Tombstones != 0 || !strings.Contains(rep.Note, "removed session r got step 5") {
		t.Fatalf("gc beside a revived session = %+v", rep)
	}
	mustVerify(t, ws)
	checkState(t, ws, "r", gcState("r", 5))
	if r := mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged}); r.Deleted != 0 {
		t.Fatalf("the next run deleted %d objects the revived session uses", r.Deleted)
	}
	checkState(t, ws, "r", gcState("r", 5))
}

// gcBesideRevived runs gc beside a session it finds removed, r, which
// gets step 5 after the run's mark and before its fence; g, removed too,
// has its three steps due for deletion. It returns the workspace and
// the run's report.
func gcBesideRevived(t *testing.T) (*cairn.Workspace, *cairn.GCReport) {
	t.Helper()
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	commitN(t, ws, "r", "r", 1, 4)
	commitN(t, ws, "g", "g", 1, 3)
	if _, err := ws.Remove(ctx, "g"); err != nil {
		t.Fatal(err)
	}
	// g@1..3 become candidates, due for deletion at the next run.
	if r := mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged}); r.Candidates != 3 {
		t.Fatalf("run 1 = %+v", r)
	}
	// Removed the old way: only the base marker above the head.
	if err := manifest.NewRepo(store, 0).WriteBase(ctx, "r", 5); err != nil {
		t.Fatal(err)
	}
	other := cairn.OpenStore(store)
	hooked := &beforePut{Store: store, key: manifest.StepKey("r", 5), fn: func() {
		commitN(t, other, "r", "r", 5, 5)
	}}
	return ws, mustGC(t, cairn.OpenStore(hooked), cairn.GCOptions{Grace: 0, Now: slotsAged})
}

// slotsAged is a clock SlotFenceAge and more past this test binary's
// start: a gc run on it (Now: slotsAged) counts the step objects a test
// wrote as old enough to delete, and a writer on it (cairn.SetClock)
// has held its head long enough to check it against the store's first
// (manifest.HeadTrust). The margin is a day, not minutes: a step
// written later than the margin after the start is not old enough on
// this clock, and under load (or -count=2) the package has run for
// longer than 10 minutes, the margin this had, and its last gc tests
// deleted nothing.
var slotsAged = time.Now().Add(manifest.SlotFenceAge + 24*time.Hour)

// TestGCRevivedReportAddsUp: a run that a revived session stops from
// deleting reports what it was to delete as candidates, so that its
// live objects, candidates and deletions still add up to the objects it
// listed. Before, they were in none of the report's counts (7 objects
// listed, 0 live, 0 deleted, 4 candidates: three objects unaccounted
// for). A later run finds them anew, their grace started over.
func TestGCRevivedReportAddsUp(t *testing.T) {
	ws, rep := gcBesideRevived(t)
	if rep.Deleted != 0 || !strings.Contains(rep.Note, "removed session r got step 5") {
		t.Fatalf("gc beside a revived session = %+v", rep)
	}
	if rep.LiveObjects+rep.Candidates+rep.Deleted != rep.Objects || rep.LiveBytes+rep.CandidateBytes+rep.DeletedBytes != rep.Bytes {
		t.Errorf("report does not add up: %d live + %d candidates + %d deleted of %d objects (%d + %d + %d of %d bytes)",
			rep.LiveObjects, rep.Candidates, rep.Deleted, rep.Objects, rep.LiveBytes, rep.CandidateBytes, rep.DeletedBytes, rep.Bytes)
	}
	if rep.Candidates != 7 {
		t.Errorf("candidates = %d, want g's 3 steps (due, kept) and r@1..4 (first seen)", rep.Candidates)
	}
	// The next run finds g's steps anew, the run after deletes them;
	// the revived session's are live.
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
	if r := mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged}); r.Deleted != 3 {
		t.Errorf("the run after next deleted %d objects, want g's 3: %+v", r.Deleted, r)
	}
	checkState(t, ws, "r", gcState("r", 5))
	mustVerify(t, ws)
}
