package cairn_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// forkedAt commits n steps to a session named from and forks its step
// at into a session named to, which gets one more step: the history of
// to is to@at+1, to@at (the copy of from@at), from@at-1 … from@1.
func forkedAt(t *testing.T, ws *cairn.Workspace, from string, n int, at uint64, to string) *cairn.Session {
	t.Helper()
	ctx := context.Background()
	src := commitSmall(t, ws, from, n)
	st, err := src.Step(ctx, at)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Fork(ctx, st, to); err != nil {
		t.Fatal(err)
	}
	return commitSmall(t, ws, to, 1)
}

// historyOf returns the steps Log yields from st, as "session@number".
func historyOf(t *testing.T, st *cairn.Step) []string {
	t.Helper()
	var out []string
	if err := st.Log(context.Background(), func(s *cairn.Step) error { out = append(out, s.String()); return nil }); err != nil {
		t.Fatalf("log %s: %v", st, err)
	}
	return out
}

// A fork's history is the fork's: below its first step, b@N is the step
// at N in b's history (a@N for b forked from a@3), read as the step it
// is (its own session and number, its own hash), not a copy; and it
// stays so once a is removed and gc has run, through Step, Resolve,
// JSON, Checkout, Diff, Log and Fork. Before, every one of them refused
// b@N below the fork point, naming a@N, which after `rm a` nothing would
// read, though gc kept it.
func TestForkHistoryReadsAsTheFork(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	b := forkedAt(t, ws, "a", 5, 3, "b") // b@4 b@3 a@2 a@1
	a, _ := ws.Session("a")
	want := map[uint64]*cairn.Step{}
	for n := uint64(1); n <= 2; n++ {
		st, err := a.Step(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		want[n] = st
	}
	if _, err := ws.Remove(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		for n := uint64(1); n <= 2; n++ {
			ref := "b@" + strconv.FormatUint(n, 10)
			for _, read := range []func() (*cairn.Step, error){
				func() (*cairn.Step, error) { return b.Step(ctx, n) },
				func() (*cairn.Step, error) { return ws.Resolve(ctx, ref) },
			} {
				st, err := read()
				if err != nil {
					t.Fatalf("%s: %s: %v", when, ref, err)
				}
				if st.Session != "a" || st.Number != n || st.ID != want[n].ID {
					t.Fatalf("%s: %s is %s (%s); want a@%d, %s", when, ref, st, st.ID.Short(), n, want[n].ID.Short())
				}
				doc, err := st.JSON(ctx)
				if err != nil || string(doc) != `{"i":`+strconv.FormatUint(n-1, 10)+`}` {
					t.Fatalf("%s: state of %s: %s, %v", when, ref, doc, err)
				}
			}
		}
		b2, _ := b.Step(ctx, 2)
		if got := strings.Join(historyOf(t, b2), " "); got != "a@2 a@1" {
			t.Errorf("%s: log of b@2: %s; want a@2 a@1", when, got)
		}
		b1, _ := b.Step(ctx, 1)
		if ch, err := ws.Diff(ctx, b1, b2); err != nil || len(ch) != 1 || ch[0].Path != "/i" {
			t.Errorf("%s: diff b@1 b@2: %v, %v; want /i changed", when, ch, err)
		}
		if err := b1.Checkout(ctx, t.TempDir()+"/out"); err != nil {
			t.Errorf("%s: checkout b@1: %v", when, err)
		}
	}
	check("after rm a")
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
	if rep := mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged}); rep.Deleted < 3 {
		t.Fatalf("gc after rm a deleted %d objects; want a@3 to a@5 at least", rep.Deleted)
	}
	// A fresh workspace: nothing of a held in memory.
	ws = cairn.OpenStore(store)
	b, _ = ws.Session("b")
	check("after gc")

	// A fork of b@2 forks a@2, its parent pointer the real a@1; its
	// history ends where b's does.
	b2, _ := b.Step(ctx, 2)
	c, err := ws.Fork(ctx, b2, "c")
	if err != nil {
		t.Fatalf("fork b@2 (a@2, a removed) to c: %v", err)
	}
	if c.Origin == nil || c.Origin.String() != "a@2" || c.Origin.ID != want[2].ID.String() || c.Parent == nil || c.Parent.ID != want[1].ID.String() {
		t.Fatalf("c = %s, origin %v, parent %v; want the fork of a@2 with parent a@1", c, c.Origin, c.Parent)
	}
	if got := strings.Join(historyOf(t, c), " "); got != "c@2 a@1" {
		t.Errorf("log of c: %s; want c@2 a@1", got)
	}

	// a's own steps stay removed, and the words say where they are read.
	_, err = a.Step(ctx, 2)
	if !errors.Is(err, cairn.ErrRemoved) || !strings.Contains(err.Error(), "if a session was forked from a above step 2, its history still holds this step, as its step 2") {
		t.Errorf("a@2 after rm a: %v; want it removed, saying a fork's history still holds it as its step 2", err)
	}
	noStoreWords(t, "a@2 after rm a", err.Error())

	// The middle of a chain of forks removed too: c's history still
	// reads, after gc.
	if _, err := ws.Remove(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
	ws = cairn.OpenStore(store)
	st, err := ws.Resolve(ctx, "c@1")
	if err != nil || st.ID != want[1].ID {
		t.Fatalf("c@1 after rm a, rm b and gc: %v, %v; want a@1", st, err)
	}
	if rep, err := ws.Verify(ctx); err != nil || len(rep.Problems) > 0 {
		t.Errorf("verify after gc: %+v, %v", rep, err)
	}
}

// In a chain of forks of forks, a step below each fork point is found
// in the session whose slots hold it, however many forks down; a fork
// of such a step forks that very step.
func TestForkOfForkHistory(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	forkedAt(t, ws, "p", 6, 3, "b") // b@4 b@3 p@2 p@1
	b, _ := ws.Session("b")
	from, _ := b.Step(ctx, 4)
	if _, err := ws.Fork(ctx, from, "c"); err != nil {
		t.Fatal(err)
	}
	for n, want := range map[uint64]string{1: "p@1", 2: "p@2", 3: "b@3", 4: "c@4"} {
		st, err := ws.Resolve(ctx, "c@"+strconv.FormatUint(n, 10))
		if err != nil || st.String() != want {
			t.Errorf("c@%d: %v, %v; want %s", n, st, err, want)
		}
	}
	// A fork of c@2, which is p@2 below both fork points.
	c2, _ := ws.Resolve(ctx, "c@2")
	d, err := ws.Fork(ctx, c2, "d")
	if err != nil || d.Origin.String() != "p@2" || d.Parent.String() != "p@1" {
		t.Fatalf("fork c@2 to d: %v, %v; want a fork of p@2 whose parent is p@1", d, err)
	}
	// p pruned past the steps: they are still b's, c's and d's, also
	// after gc.
	if _, err := ws.Prune(ctx, "p", 1); err != nil {
		t.Fatal(err)
	}
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
	mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
	for _, ref := range []string{"b@1", "c@1", "d@1", "c@2"} {
		st, err := ws.Resolve(ctx, ref)
		if err != nil {
			t.Errorf("%s after p was pruned and gc ran: %v", ref, err)
			continue
		}
		if _, err := st.JSON(ctx); err != nil {
			t.Errorf("state of %s after p was pruned and gc ran: %v", ref, err)
		}
	}
	// b pruned to its head: b's history no longer holds p's steps, and
	// neither does a fork of b made since (its history ends where b's
	// does); c's, made before, still does.
	if _, err := ws.Prune(ctx, "b", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Resolve(ctx, "b@2"); !errors.Is(err, cairn.ErrNotFound) || !strings.Contains(err.Error(), "pruned") {
		t.Errorf("b@2 after b was pruned to its head: %v; want pruned", err)
	}
	if _, err := ws.Resolve(ctx, "c@2"); err != nil {
		t.Errorf("c@2 after b was pruned: %v", err)
	}
}

// The edges of a fork's history: step 0, a step above the head, a huge
// step number, a fork of a first step (nothing below it), and a fork
// whose history is pruned below the fork point.
func TestForkHistoryEdges(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	b := forkedAt(t, ws, "a", 5, 3, "b")
	for _, ref := range []string{"b@0", "b@99", "b@18446744073709551615", "b@18446744073709551616"} {
		if st, err := ws.Resolve(ctx, ref); err == nil {
			t.Errorf("%s: %s; want an error", ref, st)
		}
	}
	if _, err := b.Step(ctx, 99); !errors.Is(err, cairn.ErrNotFound) || !strings.Contains(err.Error(), "head is step 4") {
		t.Errorf("b@99: %v; want not found, the head is step 4", err)
	}
	forkedAt(t, ws, "one", 3, 1, "f1") // f1@2 f1@1 (copy of one@1)
	if st, err := ws.Resolve(ctx, "f1@1"); err != nil || st.String() != "f1@1" {
		t.Errorf("f1@1: %v, %v; want the fork's own first step", st, err)
	}
	// A session pruned before the fork: the fork's history starts
	// where the source's did.
	pr := commitSmall(t, ws, "pr", 5)
	if _, err := ws.Prune(ctx, "pr", 2); err != nil {
		t.Fatal(err)
	}
	from, _ := pr.Step(ctx, 5)
	if _, err := ws.Fork(ctx, from, "fp"); err != nil {
		t.Fatal(err)
	}
	if st, err := ws.Resolve(ctx, "fp@4"); err != nil || st.String() != "pr@4" {
		t.Errorf("fp@4: %v, %v; want pr@4", st, err)
	}
	if _, err := ws.Resolve(ctx, "fp@2"); !errors.Is(err, cairn.ErrNotFound) || !strings.Contains(err.Error(), "starts at step 4") {
		t.Errorf("fp@2: %v; want pruned, the history starts at step 4", err)
	}
}

// Reading a fork's step below its fork point costs a LIST and a GET per
// fork level, whatever the length of the history in between. A chain of
// forks of forks is as long as an agent that keeps forking its newest
// branch makes it: 100 levels read (show, diff, checkout and fork of
// such a step refused it as "more than 64 forks of forks" up to
// a6ad8fb), and only a chain past Limits.MaxForkLevels is refused, as a
// limit that names itself, not walked.
func TestForkHistoryBounded(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	forkedAt(t, ws, "long", 300, 290, "f")
	b, _ := ws.Session("f")
	before := ws.Requests()
	st, err := b.Step(ctx, 1)
	if err != nil || st.String() != "long@1" {
		t.Fatalf("f@1: %v, %v", st, err)
	}
	used := ws.Requests().Sub(before)
	if used.Get+used.List > 12 {
		t.Errorf("f@1 of a fork of long@290 took %d GETs and %d LISTs; want a handful", used.Get, used.List)
	}
	t.Logf("f@1 below a fork at 290: %d GETs, %d LISTs", used.Get, used.List)

	// A chain of forks: each fork gets a step, and the next fork is of
	// that step, so that zK@1 is z1@1 (the copy of z0@1), K-1 fork
	// levels down.
	const levels = 100
	forkChain(t, ws, levels)
	deepest := "z" + strconv.Itoa(levels)
	before = ws.Requests()
	if st, err := ws.Resolve(ctx, deepest+"@1"); err != nil || st.String() != "z1@1" {
		t.Fatalf("%s@1: %v, %v; want z1@1", deepest, st, err)
	}
	used = ws.Requests().Sub(before)
	if used.Get+used.List > 2*levels+12 {
		t.Errorf("%s@1, %d fork levels down: %d GETs and %d LISTs; want about two a level", deepest, levels-1, used.Get, used.List)
	}
	t.Logf("%s@1, %d fork levels down: %d GETs, %d LISTs", deepest, levels-1, used.Get, used.List)
	if old, err := ws.Resolve(ctx, deepest+"@1"); err != nil {
		t.Fatal(err)
	} else if _, err := ws.Fork(ctx, old, "from-deep"); err != nil {
		t.Errorf("fork of %s@1: %v", deepest, err)
	}

	// Past the workspace's bound the walk stops, naming the limit.
	if err := ws.SetLimits(cairn.Limits{MaxForkLevels: levels / 2}); err != nil {
		t.Fatal(err)
	}
	_, err = ws.Resolve(ctx, deepest+"@1")
	if !errors.Is(err, cairn.ErrLimit) || !strings.Contains(err.Error(), "more than 50 forks of forks") {
		t.Fatalf("%s@1 over a bound of %d: %v; want ErrLimit", deepest, levels/2, err)
	}
	if hint := cairn.LimitHint(err); !strings.Contains(hint, "Limits.MaxForkLevels") || !strings.Contains(hint, "$CAIRN_MAX_FORK_LEVELS") {
		t.Errorf("limit hint %q; want it to name Limits.MaxForkLevels and $CAIRN_MAX_FORK_LEVELS", hint)
	}
	noStoreWords(t, "a chain of forks too deep", err.Error())
	// Its log, which reads every step, still goes all the way down.
	if st, err := ws.Resolve(ctx, deepest); err != nil || len(historyOf(t, st)) != levels+1 {
		t.Errorf("log of %s: %v; want all %d steps", deepest, err, levels+1)
	}
}

// forkChain commits z0@1 and then, levels times, forks zK from the head
// of z(K-1) and commits a step to it: zK@(K+1) sits levels forks of
// forks above z0@1.
func forkChain(t *testing.T, ws *cairn.Workspace, levels int) {
	t.Helper()
	ctx := context.Background()
	prev := commitSmall(t, ws, "z0", 1)
	for i := 1; i <= levels; i++ {
		head, err := prev.Head(ctx)
		if err != nil {
			t.Fatal(err)
		}
		name := "z" + strconv.Itoa(i)
		if _, err := ws.Fork(ctx, head, name); err != nil {
			t.Fatal(err)
		}
		prev = commitSmall(t, ws, name, 1)
	}
}
