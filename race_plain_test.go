package cairn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/internal/hitl"
)

// hunt is the record of one round of a plain concurrent race: what each
// actor was acknowledged, and what acknowledged prunes and removals
// dropped.
type hunt struct {
	mu      sync.Mutex
	steps   []huntAck
	drops   map[string]uint64 // session: steps below this number were dropped by an acknowledged prune or removal
	removed map[string]uint64 // session: the head an acknowledged removal removed
	log     []string
}

type huntAck struct {
	who string
	st  *cairn.Step
}

func (h *hunt) ack(who string, st *cairn.Step) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.steps = append(h.steps, huntAck{who, st})
	h.log = append(h.log, fmt.Sprintf("%s: %s %s", who, st, st.ID.String()[:8]))
}

func (h *hunt) note(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log = append(h.log, fmt.Sprintf(format, args...))
}

func (h *hunt) dropped(session string, below uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.drops == nil {
		h.drops = map[string]uint64{}
	}
	h.drops[session] = max(h.drops[session], below)
}

// huntRace runs rounds rounds; each round calls setup (on a shared
// workspace) with the round's number, then runs each actor on a
// workspace of its own over the same local directory, then checks with
// a fresh workspace that every acknowledged step not dropped is in its
// session's history, and that Verify reports no problems.
func huntRace(t *testing.T, rounds int, setup func(t *testing.T, ws *cairn.Workspace, round int), actors ...func(ws *cairn.Workspace, round int, h *hunt)) {
	t.Helper()
	huntRaceDir(t, t.TempDir(), rounds, setup, actors...)
}

func huntRaceDir(t *testing.T, dir string, rounds int, setup func(t *testing.T, ws *cairn.Workspace, round int), actors ...func(ws *cairn.Workspace, round int, h *hunt)) {
	t.Helper()
	ctx := context.Background()
	ws, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if testing.Short() {
		rounds /= 6
	}
	failures, roundsFailed := 0, 0
	defer func() {
		if huntCount {
			t.Logf("%d of %d rounds failed", roundsFailed, rounds)
		}
	}()
	tally := map[string]int{}
	seen := map[string]bool{}
	defer func() {
		t.Logf("acknowledged: %v", tally)
		if n := huntDeleted.Swap(0); n > 0 {
			t.Logf("gc deleted %d objects", n)
		}
	}()
	for i := range rounds {
		if setup != nil {
			setup(t, ws, i)
		}
		h := &hunt{}
		var wg sync.WaitGroup
		for _, act := range actors {
			wg.Add(1)
			go func() {
				defer wg.Done()
				own, err := cairn.Open(ctx, dir)
				if err != nil {
					t.Error(err)
					return
				}
				defer own.Close()
				act(own, i, h)
			}()
		}
		wg.Wait()
		fresh, err := cairn.Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		histories := map[string]map[cas.ID]bool{}
		for _, a := range h.steps {
			tally[a.who]++
			name := a.st.Session
			if a.st.Number < h.drops[name] {
				continue
			}
			if histories[name] == nil {
				histories[name] = historyIDs(t, fresh, name)
			}
			if !histories[name][a.st.ID] {
				failures++
				t.Errorf("round %d: %s's acknowledged step %s (%s) is not in the history of %s: %v\nevents: %v",
					i, a.who, a.st, a.st.ID.String()[:8], name, logOfLoose(fresh, name), h.log)
			}
		}
		for name, head := range h.removed {
			if st, err := fresh.Resolve(ctx, fmt.Sprintf("%s@%d", name, head)); err == nil && huntRemovedReads {
				failures++
				t.Errorf("round %d: %s was removed at %d, but %s reads\nevents: %v", i, name, head, st, h.log)
			}
			later := false
			for _, a := range h.steps {
				later = later || a.st.Session == name && a.st.Number > head
			}
			if later {
				continue
			}
			if st, err := fresh.ReadHead(ctx, name); !errors.Is(err, cairn.ErrRemoved) {
				// an unacknowledged step may have landed above the tombstone
				if err == nil && st.Number > head+1 {
					h.note("check: %s has unacknowledged head %s after its removal", name, st)
				} else {
					failures++
					t.Errorf("round %d: %s was removed at %d, no step was acknowledged above, but its head reads %v %v\nevents: %v", i, name, head, st, err, h.log)
				}
			}
		}
		if huntCheck != nil {
			if msg := huntCheck(fresh, i); msg != "" {
				failures++
				t.Errorf("round %d: %s\nevents: %v", i, msg, h.log)
			}
		}
		rep, err := fresh.Verify(ctx)
		if err != nil {
			t.Errorf("round %d: verify: %v\nevents: %v", i, err, h.log)
			failures++
		} else {
			for _, p := range rep.Problems {
				if seen[p.String()] {
					continue // reported in an earlier round
				}
				seen[p.String()] = true
				t.Errorf("round %d: verify: %s\nevents: %v", i, p, h.log)
				failures++
			}
		}
		if failures > 0 && huntCount {
			roundsFailed++
			failures = 0
			t.Logf("round %d failed", i)
		}
		if failures > 3 && !huntCount {
			t.Fatalf("stopping after round %d of %d", i, rounds)
		}
	}
}

var huntDeleted atomic.Int64

// huntCount counts failed rounds instead of stopping ($HUNT_COUNT).
var huntCount = os.Getenv("HUNT_COUNT") != ""

// huntRemovedReads makes a round fail if the last step an acknowledged
// removal removed still reads (S@N). Off: a prune racing the removal can
// put back the lower base it computed before the removal (plain put of
// the base marker), and the removed steps read again.
var huntRemovedReads = os.Getenv("HUNT_REMOVED_READS") != ""

// huntCheck, if set, checks more after each round: a non-empty answer is a failure.
var huntCheck func(ws *cairn.Workspace, round int) string

// historyIDs returns the IDs of the steps in the history of name, from its
// head; a removed or empty session has none.
func historyIDs(t *testing.T, ws *cairn.Workspace, name string) map[cas.ID]bool {
	t.Helper()
	out := map[cas.ID]bool{}
	s, _ := ws.Session(name)
	err := s.Log(context.Background(), func(st *cairn.Step) error {
		out[st.ID] = true
		return nil
	})
	if err != nil && !errors.Is(err, cairn.ErrRemoved) && !errors.Is(err, cairn.ErrNotFound) {
		t.Errorf("log %s: %v", name, err)
	}
	return out
}

func logOfLoose(ws *cairn.Workspace, name string) []string {
	var out []string
	s, _ := ws.Session(name)
	err := s.Log(context.Background(), func(st *cairn.Step) error {
		out = append(out, st.String()+" "+st.ID.String()[:8])
		return nil
	})
	if err != nil {
		out = append(out, "error: "+err.Error())
	}
	return out
}

// huntWriter commits n steps to the session named by name(round), going
// on after errors; patch alternates JSON Patch commits.
func huntWriter(who string, n int, patch bool, name func(int) string) func(*cairn.Workspace, int, *hunt) {
	return func(ws *cairn.Workspace, round int, h *hunt) {
		s, err := ws.Session(name(round))
		if err != nil {
			return
		}
		for k := range n {
			state := cairn.JSON([]byte(fmt.Sprintf(`{"who":%q,"k":%d,"a":[1,2,3]}`, who, k)))
			if patch && k%2 == 1 {
				state = cairn.Patch([]byte(fmt.Sprintf(`[{"op":"add","path":"/p%s%d","value":%d}]`, who, k, k)))
			}
			st, err := s.Commit(context.Background(), state, cairn.CommitOptions{})
			if err == nil {
				h.ack(who, st)
			} else {
				h.note("%s: commit: %v", who, err)
			}
		}
	}
}

func sessionName(prefix string) func(int) string {
	return func(round int) string { return fmt.Sprintf("%s%d", prefix, round) }
}

func huntRemover(name func(int) string, times int) func(*cairn.Workspace, int, *hunt) {
	return func(ws *cairn.Workspace, round int, h *hunt) {
		for range times {
			res, err := ws.Remove(context.Background(), name(round))
			if err == nil {
				h.dropped(res.Session, res.Head+1)
				h.mu.Lock()
				if h.removed == nil {
					h.removed = map[string]uint64{}
				}
				h.removed[res.Session] = max(h.removed[res.Session], res.Head)
				h.mu.Unlock()
				h.note("remove: %+v", *res)
			} else {
				h.note("remove: %v", err)
			}
		}
	}
}

func huntPruner(name func(int) string, times int, keep uint64) func(*cairn.Workspace, int, *hunt) {
	return func(ws *cairn.Workspace, round int, h *hunt) {
		for range times {
			res, err := ws.Prune(context.Background(), name(round), keep)
			if err == nil {
				h.dropped(res.Session, res.NewBase)
				h.note("prune: %+v", *res)
			} else {
				h.note("prune: %v", err)
			}
		}
	}
}

// huntForker forks the head of from(round) (or from@at if at > 0) to to(round).
func huntForker(who string, from func(int) string, at uint64, to func(int) string) func(*cairn.Workspace, int, *hunt) {
	return func(ws *cairn.Workspace, round int, h *hunt) {
		ctx := context.Background()
		ref := from(round)
		if at > 0 {
			ref = fmt.Sprintf("%s@%d", ref, at)
		}
		var src *cairn.Step
		var err error
		for range 50 {
			if src, err = ws.Resolve(ctx, ref); err == nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		if err != nil {
			h.note("%s: resolve %s: %v", who, ref, err)
			return
		}
		st, err := ws.Fork(ctx, src, to(round))
		if err == nil {
			h.ack(who, st)
		} else {
			h.note("%s: fork %s: %v", who, src, err)
		}
	}
}

func huntGC(times int, now time.Duration) func(*cairn.Workspace, int, *hunt) {
	return func(ws *cairn.Workspace, round int, h *hunt) {
		for range times {
			rep, err := ws.GC(context.Background(), cairn.GCOptions{Grace: 0, Now: time.Now().Add(now)})
			if err != nil {
				h.note("gc: %v", err)
			} else {
				huntDeleted.Add(int64(rep.Deleted))
				h.note("gc: deleted %v, tombstones %v, young %d", rep.DeletedKeys, rep.TombstoneKeys, rep.YoungSteps)
			}
		}
	}
}

func seed(prefix string, steps int) func(*testing.T, *cairn.Workspace, int) {
	return func(t *testing.T, ws *cairn.Workspace, round int) {
		commitN(t, ws, fmt.Sprintf("%s%d", prefix, round), "s", 1, steps)
	}
}

// huntHITL asks, replies and withdraws in turn in session name(round), with the
// hitl helpers.
func huntHITL(who string, n int, name func(int) string) func(*cairn.Workspace, int, *hunt) {
	return func(ws *cairn.Workspace, round int, h *hunt) {
		ctx := context.Background()
		s, err := ws.Session(name(round))
		if err != nil {
			return
		}
		for k := range n {
			var st *cairn.Step
			switch k % 3 {
			case 0:
				st, err = hitl.Ask(ctx, s, "q?", nil)
			case 1:
				st, err = hitl.Reply(ctx, s, json.RawMessage(`"yes"`))
			case 2:
				st, err = s.Commit(ctx, cairn.JSON([]byte(`{"withdrawn":true}`)), cairn.CommitOptions{Withdraw: true})
			}
			if err == nil {
				h.ack(who, st)
			} else {
				h.note("%s: %d: %v", who, k, err)
			}
		}
	}
}

func huntAwaiting(who string, n int, name func(int) string) func(*cairn.Workspace, int, *hunt) {
	return func(ws *cairn.Workspace, round int, h *hunt) {
		s, err := ws.Session(name(round))
		if err != nil {
			return
		}
		for k := range n {
			st, err := s.Commit(context.Background(), cairn.JSON([]byte(fmt.Sprintf(`{"ask":%d}`, k))), cairn.CommitOptions{Status: cairn.AwaitingInput})
			if err == nil {
				h.ack(who, st)
			} else {
				h.note("%s: ask: %v", who, err)
			}
		}
	}
}

// huntCLI commits n steps to name(round), each from a workspace of its
// own over url, with the head cache under cache: as the CLI does.
func huntCLI(who string, n int, url, cache string, name func(int) string) func(*cairn.Workspace, int, *hunt) {
	return func(_ *cairn.Workspace, round int, h *hunt) {
		ctx := context.Background()
		for k := range n {
			ws, err := cairn.Open(ctx, url)
			if err != nil {
				return
			}
			ws.UseHeadCache(cache)
			s, _ := ws.Session(name(round))
			var state cairn.State = cairn.JSON([]byte(fmt.Sprintf(`{"who":%q,"k":%d}`, who, k)))
			if k%2 == 1 {
				state = cairn.Patch([]byte(fmt.Sprintf(`[{"op":"add","path":"/p%s%d","value":%d}]`, who, k, k)))
			}
			st, err := s.Commit(ctx, state, cairn.CommitOptions{})
			if err == nil {
				h.ack(who, st)
			} else {
				h.note("%s: commit: %v", who, err)
			}
		}
	}
}

// questionsAnswered says whether, in the history of name(round), every
// step on a head that awaits input is a reply or a withdrawal: no
// question was buried by a plain commit.
func questionsAnswered(name func(int) string) func(*cairn.Workspace, int) string {
	return func(ws *cairn.Workspace, round int) string {
		ctx := context.Background()
		s, _ := ws.Session(name(round))
		var steps []*cairn.Step
		s.Log(ctx, func(st *cairn.Step) error { steps = append(steps, st); return nil })
		for i := 0; i+1 < len(steps); i++ {
			child, parent := steps[i], steps[i+1]
			if parent.Status != cairn.AwaitingInput {
				continue
			}
			if strings.Contains(string(child.Record), `"reply"`) {
				continue
			}
			if b, err := child.JSON(ctx); err == nil && strings.Contains(string(b), "withdrawn") {
				continue
			}
			return fmt.Sprintf("%s buried the question of %s (record %s)", child, parent, child.Record)
		}
		return ""
	}
}

// patchesOnParent says whether, in the history of name(round), every
// step a JSON Patch made (it adds one key "p...") holds its parent's
// whole state besides: the patch was applied to its parent, not to a
// state some other writer had moved past.
func patchesOnParent(name func(int) string) func(*cairn.Workspace, int) string {
	return func(ws *cairn.Workspace, round int) string {
		ctx := context.Background()
		s, _ := ws.Session(name(round))
		var steps []*cairn.Step
		s.Log(ctx, func(st *cairn.Step) error { steps = append(steps, st); return nil })
		doc := func(st *cairn.Step) map[string]any {
			b, err := st.JSON(ctx)
			if err != nil {
				return nil
			}
			var m map[string]any
			json.Unmarshal(b, &m)
			return m
		}
		for i := 0; i+1 < len(steps); i++ {
			child, parent := doc(steps[i]), doc(steps[i+1])
			if child == nil || parent == nil {
				continue
			}
			added := 0
			for k := range child {
				if _, ok := parent[k]; !ok && strings.HasPrefix(k, "p") {
					added++
				}
			}
			if added != 1 || len(child) != len(parent)+1 {
				continue // not a patch
			}
			for k, v := range parent {
				if fmt.Sprint(child[k]) != fmt.Sprint(v) {
					return fmt.Sprintf("%s, a patch, does not hold %s's %s", steps[i], steps[i+1], k)
				}
			}
		}
		return ""
	}
}

func withFanout(n int, act func(*cairn.Workspace, int, *hunt)) func(*cairn.Workspace, int, *hunt) {
	return func(ws *cairn.Workspace, round int, h *hunt) {
		ws.SetCompactionFanout(n)
		act(ws, round, h)
	}
}

// The tests below race actors with plain concurrency, each on a workspace
// of its own over one local directory store (see huntRace), and check
// that every acknowledged step not dropped by an acknowledged prune or
// removal is in its session's history, and that verify is clean. Each
// held when it was written (the rounds given, several runs): they are
// kept as regression tests. $HUNT_COUNT counts failed rounds instead of
// stopping at the first few.

// TestPlainRaceCommitRemove races two writers of one session (4 and 3
// commits) against two removals of it: the writers go on to the reused
// name. Held, 200 rounds.
func TestPlainRaceCommitRemove(t *testing.T) {
	name := sessionName("s")
	huntRace(t, 100, seed("s", 3), huntWriter("w1", 4, false, name), huntRemover(name, 2), huntWriter("w2", 3, false, name))
}

// TestPlainRaceCommitPruneRemove races two writers (one committing JSON
// Patches) against prunes (keep 1) and a removal of the session. Held,
// 200 rounds (and 200 without the removal).
func TestPlainRaceCommitPruneRemove(t *testing.T) {
	name := sessionName("s")
	huntRace(t, 100, seed("s", 3), huntWriter("w1", 4, false, name), huntPruner(name, 2, 1), huntRemover(name, 1), huntWriter("w2", 3, true, name))
}

// TestPlainRaceRemoveRemove races two removers (three removals each)
// against two writers of the reused name and prunes; an acknowledged
// removal's head must read removed after. Held, 150 rounds.
func TestPlainRaceRemoveRemove(t *testing.T) {
	name := sessionName("s")
	huntRace(t, 80, seed("s", 3), huntRemover(name, 3), huntRemover(name, 3), huntWriter("w1", 4, false, name), huntWriter("w2", 3, true, name), huntPruner(name, 2, 1))
}

// TestPlainRacePruneRemove races prunes (keep 1 and keep 3) against a
// removal, then a late writer of the reused name: no prune may bring
// back a removed session or a removed step. Held, 150 rounds (and 150
// with two removals and no writer).
func TestPlainRacePruneRemove(t *testing.T) {
	name := sessionName("s")
	later := func(ws *cairn.Workspace, round int, h *hunt) {
		time.Sleep(time.Duration(round%5) * time.Millisecond)
		huntWriter("late", 2, false, name)(ws, round, h)
	}
	huntRace(t, 100, seed("s", 5), huntPruner(name, 2, 1), huntPruner(name, 1, 3), huntRemover(name, 1), later)
}

// TestPlainRaceForkOfForkInFlight races a fork of s@5 to a, a fork of
// a's head to b (retrying until a has one), and writers of a and b.
// Held, 200 rounds.
func TestPlainRaceForkOfForkInFlight(t *testing.T) {
	name := sessionName("s")
	huntRace(t, 60, seed("s", 5), huntForker("f1", name, 5, sessionName("a")), huntForker("f2", sessionName("a"), 0, sessionName("b")), huntWriter("wa", 2, false, sessionName("a")), huntWriter("wb", 2, false, sessionName("b")))
}

// TestPlainRaceForkSourceCommits races two forks of s's head to a against
// a writer of s and a writer (JSON Patches) of a. Held, 200 rounds.
func TestPlainRaceForkSourceCommits(t *testing.T) {
	name := sessionName("s")
	huntRace(t, 60, seed("s", 3), huntForker("f1", name, 0, sessionName("a")), huntForker("f2", name, 0, sessionName("a")), huntWriter("w", 3, false, name), huntWriter("wa", 2, true, sessionName("a")))
}

// TestPlainRaceSameNameWriters races three writers of a new session name
// on workspaces of their own, two of them alternating JSON Patch commits;
// every patch step must hold its parent's state. Held, 200 rounds.
func TestPlainRaceSameNameWriters(t *testing.T) {
	name := sessionName("s")
	huntCheck = patchesOnParent(name)
	defer func() { huntCheck = nil }()
	huntRace(t, 80, nil, huntWriter("w1", 4, true, name), huntWriter("w2", 4, true, name), huntWriter("w3", 4, false, name))
}

// TestPlainRacePatchWriters races three writers committing only JSON
// Patches against a removal: every patch step holds its parent's state.
// Held, 150 rounds.
func TestPlainRacePatchWriters(t *testing.T) {
	name := sessionName("s")
	huntCheck = patchesOnParent(name)
	defer func() { huntCheck = nil }()
	patcher := func(who string) func(*cairn.Workspace, int, *hunt) {
		return func(ws *cairn.Workspace, round int, h *hunt) {
			s, _ := ws.Session(name(round))
			for k := range 4 {
				st, err := s.Commit(context.Background(), cairn.Patch([]byte(fmt.Sprintf(`[{"op":"add","path":"/p%s%d","value":%d}]`, who, k, k))), cairn.CommitOptions{})
				if err == nil {
					h.ack(who, st)
				}
			}
		}
	}
	huntRace(t, 60, seed("s", 1), patcher("a"), patcher("b"), patcher("c"), huntRemover(name, 1))
}

// TestPlainRaceSharedSession races three goroutines committing through
// one *Session of one workspace against a writer on another workspace
// and a removal. Held, 150 rounds.
func TestPlainRaceSharedSession(t *testing.T) {
	name := sessionName("s")
	shared := func(ws *cairn.Workspace, round int, h *hunt) {
		var wg sync.WaitGroup
		for g := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				huntWriter(fmt.Sprintf("g%d", g), 3, g == 1, name)(ws, round, h)
			}()
		}
		wg.Wait()
	}
	huntRace(t, 80, seed("s", 2), shared, huntWriter("other", 3, true, name), huntRemover(name, 1))
}

// TestPlainRacePauses races two human-in-the-loop actors (hitl.Ask,
// hitl.Reply, a Withdraw commit, in turn), plain commits and commits
// with status awaiting_input: no plain commit may bury a question. Held,
// 150 rounds; and 120 with a removal and prunes instead of the writers
// (TestPlainRacePausesRemovePrune).
func TestPlainRacePauses(t *testing.T) {
	name := sessionName("s")
	huntCheck = questionsAnswered(name)
	defer func() { huntCheck = nil }()
	huntRace(t, 60, seed("s", 2), huntHITL("h1", 6, name), huntHITL("h2", 6, name), huntWriter("w", 4, false, name), huntAwaiting("aw", 3, name), huntWriter("w2", 3, true, name))
}

func TestPlainRacePausesRemovePrune(t *testing.T) {
	name := sessionName("s")
	huntRace(t, 60, seed("s", 2), huntHITL("h1", 6, name), huntHITL("h2", 6, name), huntAwaiting("aw", 2, name), huntRemover(name, 1), huntPruner(name, 2, 1))
}

// TestPlainRaceGC races gc (Grace 0, three runs) against writers, a
// prune, a removal, a fork of s and a fork of that fork. Held, 100
// rounds. (Not with a writer of the fork's name: a fork of the pruned s
// that loses to it leaves its base marker over the writer's step.)
func TestPlainRaceGC(t *testing.T) {
	name := sessionName("s")
	huntRace(t, 40, seed("s", 4), huntGC(3, 0), huntWriter("w1", 3, false, name), huntPruner(name, 1, 1), huntRemover(name, 1), huntForker("f", name, 0, sessionName("f")), huntForker("g", sessionName("f"), 0, sessionName("g")), huntWriter("w2", 3, true, name))
}

// TestPlainRaceCLIWriters races writers that commit as the CLI does, each
// commit from a fresh workspace with one shared head cache (alternating
// JSON Patches), against a writer, a removal and a prune. Held, 150
// rounds; and 80 with gc an hour ahead instead of the prune.
func TestPlainRaceCLIWriters(t *testing.T) {
	name := sessionName("s")
	dir, cache := t.TempDir(), t.TempDir()
	huntCheck = patchesOnParent(name)
	defer func() { huntCheck = nil }()
	huntRaceDir(t, dir, 80, seed("s", 3), huntCLI("c1", 3, dir, cache, name), huntCLI("c2", 3, dir, cache, name), huntRemover(name, 1), huntPruner(name, 1, 1), huntWriter("w", 2, false, name))
}

// TestPlainRaceRemoveForkTarget races a fork of s's head to f against two
// removals of f and a writer of f. Held, 150 rounds.
func TestPlainRaceRemoveForkTarget(t *testing.T) {
	name := sessionName("s")
	huntRace(t, 80, seed("s", 4), huntForker("f", name, 0, sessionName("f")), huntRemover(sessionName("f"), 2), huntWriter("wf", 2, false, sessionName("f")))
}

// TestPlainRaceForkToRemovedName races two forks to a removed name (which
// refuses them) against a writer of the name and another removal. Held,
// 60 rounds.
func TestPlainRaceForkToRemovedName(t *testing.T) {
	setup := func(t *testing.T, ws *cairn.Workspace, round int) {
		commitN(t, ws, fmt.Sprintf("s%d", round), "s", 1, 8)
		f := fmt.Sprintf("f%d", round)
		commitN(t, ws, f, "f", 1, 4)
		if _, err := ws.Remove(context.Background(), f); err != nil {
			t.Fatal(err)
		}
	}
	to := sessionName("f")
	huntRace(t, 30, setup, huntForker("fs3", sessionName("s"), 3, to), huntForker("fs8", sessionName("s"), 8, to), huntWriter("w", 2, false, to), huntRemover(to, 1))
}

// TestPlainRaceCompactingWriters races writers compacting every other
// step (fanout 2) against prunes, gc (Grace 0), and forks of s and of
// the fork. Held, 100 rounds.
func TestPlainRaceCompactingWriters(t *testing.T) {
	name := sessionName("s")
	setup := func(t *testing.T, ws *cairn.Workspace, round int) {
		ws.SetCompactionFanout(2)
		commitN(t, ws, name(round), "s", 1, 6)
	}
	huntRace(t, 40, setup, withFanout(2, huntWriter("w1", 5, true, name)), withFanout(2, huntWriter("w2", 5, false, name)), huntPruner(name, 2, 2), huntGC(2, 0), huntForker("f", name, 0, sessionName("f")), huntForker("g", sessionName("f"), 0, sessionName("g")))
}

// huntExpecter commits n steps with Expect set to the head it reads
// first; an acknowledged step must sit right on that head.
func huntExpecter(who string, n int, name func(int) string, bad *[]string) func(*cairn.Workspace, int, *hunt) {
	return func(ws *cairn.Workspace, round int, h *hunt) {
		ctx := context.Background()
		s, _ := ws.Session(name(round))
		for k := range n {
			var want uint64
			if head, err := s.Head(ctx); err == nil {
				want = head.Number
			} else if !errors.Is(err, cairn.ErrNotFound) && !errors.Is(err, cairn.ErrRemoved) {
				continue
			}
			st, err := s.Commit(ctx, cairn.JSON([]byte(fmt.Sprintf(`{"e":%q,"k":%d}`, who, k))), cairn.CommitOptions{Expect: cairn.ExpectHead(want)})
			if err != nil {
				h.note("%s: expect %d: %v", who, want, err)
				continue
			}
			h.ack(who, st)
			if st.Parent == nil && want != 0 || st.Parent != nil && st.Parent.Number != want {
				h.mu.Lock()
				*bad = append(*bad, fmt.Sprintf("%s: %s acknowledged with Expect %d, parent %v", who, st, want, st.Parent))
				h.mu.Unlock()
			}
		}
	}
}

// TestPlainRaceExpect races two writers committing with Expect (the head
// each read just before) against a writer of JSON Patches and a removal:
// an acknowledged Expect commit sits right on the head it expected. Held,
// 100 rounds.
func TestPlainRaceExpect(t *testing.T) {
	name := sessionName("s")
	var bad []string
	huntRace(t, 60, seed("s", 2), huntExpecter("e1", 4, name, &bad), huntExpecter("e2", 4, name, &bad), huntWriter("w", 3, true, name), huntRemover(name, 1))
	for _, b := range bad {
		t.Error(b)
	}
}

// huntDirWriter commits the directory dir (shared between actors or not)
// through the stat cache under cache, changing files before each commit;
// each acknowledged step must check out, into a directory under out.
func huntDirWriter(who, dir, cache, out string, n int, name func(int) string, bad *[]string) func(*cairn.Workspace, int, *hunt) {
	return func(ws *cairn.Workspace, round int, h *hunt) {
		ctx := context.Background()
		s, _ := ws.Session(name(round))
		for k := range n {
			os.WriteFile(filepath.Join(dir, who+".txt"), []byte(fmt.Sprintf("%s %d %d\n", who, round, k)), 0o644)
			os.WriteFile(filepath.Join(dir, "common.txt"), []byte(fmt.Sprintf("common %s %d %d\n", who, round, k%2)), 0o644)
			st, err := s.Commit(ctx, cairn.DirWithCache(dir, cache), cairn.CommitOptions{})
			if err != nil {
				h.note("%s: %v", who, err)
				continue
			}
			h.ack(who, st)
			if err := st.Checkout(ctx, filepath.Join(out, fmt.Sprintf("%s-%d-%d", who, round, k))); err != nil {
				h.mu.Lock()
				*bad = append(*bad, fmt.Sprintf("%s: checkout %s: %v", who, st, err))
				h.mu.Unlock()
			}
		}
	}
}

// TestPlainRaceDirCacheWriters races two writers committing one shared
// directory and a third its own, all through one stat cache directory
// (DirWithCache), against a removal: every acknowledged step checks out
// and verifies. Held, 150 rounds (twice).
func TestPlainRaceDirCacheWriters(t *testing.T) {
	name := sessionName("d")
	root := t.TempDir()
	cache, out := filepath.Join(root, "cache"), filepath.Join(root, "out")
	shared, own := filepath.Join(root, "shared"), filepath.Join(root, "own")
	for _, d := range []string{shared, own, out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var bad []string
	huntRace(t, 60, nil, huntDirWriter("a", shared, cache, out, 3, name, &bad), huntDirWriter("b", shared, cache, out, 3, name, &bad), huntDirWriter("c", own, cache, out, 3, name, &bad), huntRemover(name, 1))
	for _, b := range bad {
		t.Error(b)
	}
}
