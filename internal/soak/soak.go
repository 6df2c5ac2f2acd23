// Package soak is a randomised, seeded stress harness for the cairn
// binary: it runs writers, forkers, pruners, removers and gc as separate
// `cairn` processes against one store for a set time, SIGKILLs and
// SIGSTOPs them at random instants (pauses far longer than gc's grace of
// zero), records every step a command acknowledged (exit 0) with the
// state it committed, and finally checks that every acknowledged step of
// every session not removed reads back byte for byte, that log works for
// every live session and fork, and that verify is clean. (Windows
// cannot SIGSTOP a process: there it only kills.)
//
// The schedule of operations is drawn from the seed; the operating
// system's scheduling is not, so a run is reproducible in its mix, not
// in its interleaving. Every problem found names the step and command.
package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cairnlog/cairn/internal/pause"
)

// Config describes one soak run.
type Config struct {
	// Bin is the cairn binary to run; Store the store URL all processes use.
	Bin   string
	Store string
	// Env is added to every process's environment (e.g. S3 credentials).
	Env []string
	// Duration of the chaos phase; the final checks come after it.
	Duration time.Duration
	// Seed draws the schedule (0: a random seed, reported).
	Seed uint64
	// Writers is the number of writer processes' loops (default 3); two of
	// them always share a session, so slots are contended.
	Writers int
	// Log, if set, receives a line per notable event.
	Log io.Writer
}

// Report is what a run did and found.
type Report struct {
	Seed           uint64
	Store          string
	Duration       time.Duration
	StepsAcked     int64 // commits acknowledged (exit 0)
	ForksAcked     int64
	Conflicts      int64 // commits and forks refused with exit 3
	Prunes         int64
	Removals       int64
	Kills          int64 // SIGKILLs sent
	Pauses         int64 // SIGSTOP/SIGCONT pauses
	GCRuns         int64 // gc runs that completed
	ObjectsDeleted int64
	StepsChecked   int64 // acknowledged steps read back at the end
	SessionsLogged int64
	Problems       []string
}

// String formats the report's counts on one line.
func (r *Report) String() string {
	return fmt.Sprintf("soak seed=%d store=%s time=%v: steps acknowledged %d, forks %d, conflicts %d, prunes %d, removals %d, kills %d, pauses %d, gc runs %d, objects deleted %d, steps read back %d, sessions logged %d, problems %d",
		r.Seed, r.Store, r.Duration.Round(time.Second), r.StepsAcked, r.ForksAcked, r.Conflicts, r.Prunes, r.Removals,
		r.Kills, r.Pauses, r.GCRuns, r.ObjectsDeleted, r.StepsChecked, r.SessionsLogged, len(r.Problems))
}

// role is what a process does; only some roles are killed or paused.
type role int

const (
	roleWriter role = iota
	roleForker
	roleGC
	roleOther
)

type harness struct {
	cfg Config
	rep *Report

	mu       sync.Mutex
	acked    map[string]map[uint64][]byte // session -> step -> state
	base     map[string]uint64            // session -> lowest step its history keeps (from prunes)
	raised   map[string][]raise           // session -> its prunes, when each had raised the base
	removed  map[string]bool
	forks    []string
	problems []string

	procMu sync.Mutex
	procs  map[*os.Process]role
	paused map[*os.Process]bool

	stepsAcked, forksAcked, conflicts, prunes, removals atomic.Int64
	kills, pauses, gcRuns, deleted                      atomic.Int64
}

// Run runs the soak described by cfg.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Bin == "" || cfg.Store == "" {
		return nil, errors.New("soak: a cairn binary and a store are required")
	}
	if cfg.Writers <= 0 {
		cfg.Writers = 3
	}
	if cfg.Seed == 0 {
		cfg.Seed = rand.Uint64()%1_000_000_000 + 1
	}
	h := &harness{
		cfg: cfg, rep: &Report{Seed: cfg.Seed, Store: cfg.Store},
		acked: map[string]map[uint64][]byte{}, base: map[string]uint64{}, raised: map[string][]raise{}, removed: map[string]bool{},
		procs: map[*os.Process]role{}, paused: map[*os.Process]bool{},
	}
	start := time.Now()
	chaosCtx, stop := context.WithTimeout(ctx, cfg.Duration)
	defer stop()
	var wg sync.WaitGroup
	seed := func(i uint64) *rand.Rand { return rand.New(rand.NewPCG(cfg.Seed, i)) }
	for i := 0; i < cfg.Writers; i++ {
		name := fmt.Sprintf("w%d", i)
		if i == 1 {
			name = "w0" // two writers contend for one session
		}
		wg.Add(1)
		go func(i int, name string) { defer wg.Done(); h.writer(chaosCtx, seed(uint64(10+i)), i, name) }(i, name)
	}
	for i, actor := range []func(context.Context, *rand.Rand){h.forker, h.gc, h.maintainer, h.chaos} {
		wg.Add(1)
		go func(i int, actor func(context.Context, *rand.Rand)) {
			defer wg.Done()
			actor(chaosCtx, seed(uint64(i)))
		}(i, actor)
	}
	wg.Wait()
	h.resumeAll()
	h.rep.Duration = time.Since(start)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.check(ctx)
	r := h.rep
	r.StepsAcked, r.ForksAcked, r.Conflicts = h.stepsAcked.Load(), h.forksAcked.Load(), h.conflicts.Load()
	r.Prunes, r.Removals, r.Kills, r.Pauses = h.prunes.Load(), h.removals.Load(), h.kills.Load(), h.pauses.Load()
	r.GCRuns, r.ObjectsDeleted = h.gcRuns.Load(), h.deleted.Load()
	r.Problems = h.problems
	return r, nil
}

func (h *harness) logf(format string, a ...any) {
	if h.cfg.Log != nil {
		fmt.Fprintf(h.cfg.Log, "soak: "+format+"\n", a...)
	}
}

func (h *harness) problem(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	h.mu.Lock()
	h.problems = append(h.problems, msg)
	h.mu.Unlock()
	h.logf("PROBLEM: %s", msg)
}

// result is how one cairn process ended.
type result struct {
	code   int  // exit code, -1 if killed by a signal
	killed bool // ended by a signal: its outcome is unknown
	stdout string
	stderr string
}

// run runs one cairn process. It is registered for chaos while it runs
// if r is a role chaos may hit. A context ending kills it.
func (h *harness) run(ctx context.Context, r role, stdin []byte, args ...string) result {
	cmd := exec.Command(h.cfg.Bin, args...)
	cmd.Env = append(os.Environ(), append([]string{"CAIRN_STORE=" + h.cfg.Store}, h.cfg.Env...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Start(); err != nil {
		return result{code: -1, stderr: err.Error()}
	}
	h.procMu.Lock()
	h.procs[cmd.Process] = r
	h.procMu.Unlock()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var err error
	select {
	case err = <-waited:
	case <-ctx.Done():
		h.procMu.Lock()
		pause.Continue(cmd.Process)
		cmd.Process.Kill()
		h.procMu.Unlock()
		err = <-waited
	}
	h.procMu.Lock()
	delete(h.procs, cmd.Process)
	delete(h.paused, cmd.Process)
	h.procMu.Unlock()
	res := result{stdout: out.String(), stderr: strings.TrimSpace(errb.String())}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.killed, res.code = true, -1
		}
	default:
		res.code, res.killed = -1, true
	}
	return res
}

// state returns a compact JSON state for step n of session: a growing,
// capped message list (so that steps deduplicate against old blobs and
// compaction runs) and a random part.
func state(r *rand.Rand, session string, n uint64, msgs *[]string) []byte {
	*msgs = append(*msgs, fmt.Sprintf("%s step %d: %s", session, n, strings.Repeat(strconv.FormatUint(r.Uint64(), 36), 1+r.IntN(20))))
	if len(*msgs) > 40 {
		*msgs = (*msgs)[len(*msgs)-40:]
	}
	doc := struct {
		Session  string   `json:"session"`
		Step     uint64   `json:"step"`
		Messages []string `json:"messages"`
		Noise    string   `json:"noise"`
	}{session, n, *msgs, strconv.FormatUint(r.Uint64(), 16)}
	b, _ := json.Marshal(doc)
	return b
}

var headIs = regexp.MustCompile(`but the head is (\d+)`)

// writer commits to its session with --expect, learning the head from
// each conflict. If its session is removed it moves to a new name.
func (h *harness) writer(ctx context.Context, r *rand.Rand, id int, name string) {
	var head uint64
	var msgs []string
	gen := 0
	for ctx.Err() == nil {
		h.mu.Lock()
		if h.removed[name] {
			gen++
			name, head, msgs = fmt.Sprintf("w%d.%d", id, gen), 0, nil
		}
		h.mu.Unlock()
		doc := state(r, name, head+1, &msgs)
		started := time.Now()
		res := h.run(ctx, roleWriter, doc, "commit", name, "-", "--expect", strconv.FormatUint(head, 10), "--json")
		switch {
		case ctx.Err() != nil:
			return
		case res.code == 0:
			var out struct {
				Step uint64 `json:"step"`
			}
			if err := json.Unmarshal([]byte(res.stdout), &out); err != nil || out.Step != head+1 {
				h.problem("commit %s --expect %d acknowledged %q", name, head, res.stdout)
				continue
			}
			head = out.Step
			h.ack(name, head, doc)
			h.checkAbove(name, head, started)
			h.stepsAcked.Add(1)
		case res.code == 3:
			h.conflicts.Add(1)
			if m := headIs.FindStringSubmatch(res.stderr); m != nil {
				head, _ = strconv.ParseUint(m[1], 10, 64)
			}
		case res.killed:
			// Unknown outcome: the next --expect finds out.
		default:
			h.problem("commit %s --expect %d: exit %d: %s", name, head, res.code, res.stderr)
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// raise is a prune that had raised a session's base by the time at.
type raise struct {
	at   time.Time
	base uint64
}

// checkAbove reports step n of session, acknowledged by a commit that
// started at started, if a prune had raised the session's base above n
// before then: the step landed in a slot below the base (one gc emptied),
// where no reader looks, and its writer was told it was written.
func (h *harness) checkAbove(session string, n uint64, started time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.raised[session] {
		if r.at.Before(started) && n < r.base {
			h.problem("commit acknowledged %s@%d below the base %d a prune had set before the commit started: the step is lost", session, n, r.base)
			return
		}
	}
}

func (h *harness) ack(session string, n uint64, doc []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.acked[session]
	if m == nil {
		m = map[uint64][]byte{}
		h.acked[session] = m
	}
	m[n] = doc
}

// pick returns a random acknowledged step of a session not removed.
func (h *harness) pick(r *rand.Rand) (string, uint64, []byte, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var names []string
	for s := range h.acked {
		if !h.removed[s] && len(h.acked[s]) > 0 {
			names = append(names, s)
		}
	}
	if len(names) == 0 {
		return "", 0, nil, false
	}
	sort.Strings(names)
	s := names[r.IntN(len(names))]
	steps := make([]uint64, 0, len(h.acked[s]))
	for n := range h.acked[s] {
		steps = append(steps, n)
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i] < steps[j] })
	// Mostly recent steps (live), sometimes any (maybe pruned).
	i := len(steps) - 1 - r.IntN(min(len(steps), 8))
	if r.IntN(4) == 0 {
		i = r.IntN(len(steps))
	}
	return s, steps[i], h.acked[s][steps[i]], true
}

// pickPruned returns an acknowledged step at or just above the base of
// a pruned session: the fork whose history ends where its source's does.
func (h *harness) pickPruned(r *rand.Rand) (string, uint64, []byte, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var names []string
	for s, b := range h.base {
		if b > 1 && !h.removed[s] {
			names = append(names, s)
		}
	}
	if len(names) == 0 {
		return "", 0, nil, false
	}
	sort.Strings(names)
	s := names[r.IntN(len(names))]
	n := h.base[s] + uint64(r.IntN(4))
	doc, ok := h.acked[s][n]
	return s, n, doc, ok
}

// forker forks acknowledged steps of live and pruned sessions.
func (h *harness) forker(ctx context.Context, r *rand.Rand) {
	for k := 0; ctx.Err() == nil; k++ {
		src, n, doc, ok := h.pickPruned(r)
		if !ok || r.IntN(2) == 0 {
			src, n, doc, ok = h.pick(r)
		}
		if !ok {
			sleep(ctx, 50*time.Millisecond)
			continue
		}
		to := fmt.Sprintf("f%d", k)
		res := h.run(ctx, roleForker, nil, "fork", fmt.Sprintf("%s@%d", src, n), to)
		switch {
		case ctx.Err() != nil:
			return
		case res.code == 0:
			h.ack(to, n, doc)
			h.mu.Lock()
			h.forks = append(h.forks, to)
			h.mu.Unlock()
			h.forksAcked.Add(1)
		case res.code == 3:
			h.conflicts.Add(1)
		case res.killed:
		case res.code == 1 && gone(res.stderr):
			// Pruned or removed before or while forking: refused, as it must be.
		default:
			h.problem("fork %s@%d %s: exit %d: %s", src, n, to, res.code, res.stderr)
		}
		sleep(ctx, time.Duration(r.IntN(150))*time.Millisecond)
	}
}

// gone reports whether a command's stderr says that the session, or the
// step asked for, is no longer there to read, as other processes of the
// soak may have made it: removed, pruned, or, once removed and started
// again, shorter or without steps. cairn.NotFoundError says "not found"
// once, whatever the reason. A step the store has lost is not among
// them: that is damage, a problem.
func gone(stderr string) bool {
	return strings.Contains(stderr, "not found") && !strings.Contains(stderr, lostWords)
}

// lostWords begin every reason of a cairn.NotFoundError whose Why is
// NotFoundLost (TestGoneWords holds them to it).
const lostWords = "the store has lost "

var deletedRe = regexp.MustCompile(`"deleted":(\d+)`)

// gc runs `cairn gc --grace 0s` back to back.
func (h *harness) gc(ctx context.Context, r *rand.Rand) {
	for ctx.Err() == nil {
		res := h.run(ctx, roleGC, nil, "gc", "--grace", "0s", "--json")
		switch {
		case ctx.Err() != nil:
			return
		case res.code == 0:
			h.gcRuns.Add(1)
			if m := deletedRe.FindStringSubmatch(res.stdout); m != nil {
				n, _ := strconv.ParseInt(m[1], 10, 64)
				h.deleted.Add(n)
			}
		case res.killed:
		default:
			h.problem("gc --grace 0s: exit %d: %s", res.code, res.stderr)
			sleep(ctx, 200*time.Millisecond)
		}
		sleep(ctx, time.Duration(r.IntN(50))*time.Millisecond)
	}
}

var prunedRe = regexp.MustCompile(`history now (\d+)\.\.|history already starts at step (\d+)`)

// maintainer prunes sessions and removes forks and, now and then, a
// writer's session.
func (h *harness) maintainer(ctx context.Context, r *rand.Rand) {
	for ctx.Err() == nil {
		sleep(ctx, time.Duration(100+r.IntN(400))*time.Millisecond)
		s, _, _, ok := h.pick(r)
		if !ok || ctx.Err() != nil {
			continue
		}
		if r.IntN(5) > 0 {
			res := h.run(ctx, roleOther, nil, "prune", s, "--keep-last", strconv.Itoa(1+r.IntN(6)))
			if ctx.Err() != nil {
				return
			}
			if res.code != 0 {
				if !gone(res.stderr) {
					h.problem("prune %s: exit %d: %s", s, res.code, res.stderr)
				}
				continue
			}
			h.prunes.Add(1)
			if m := prunedRe.FindStringSubmatch(res.stdout); m != nil {
				b, _ := strconv.ParseUint(m[1]+m[2], 10, 64)
				h.mu.Lock()
				h.base[s] = max(h.base[s], b)
				h.raised[s] = append(h.raised[s], raise{time.Now(), b})
				h.mu.Unlock()
			}
			continue
		}
		// Removal: forks mostly, a writer's session one time in four.
		h.mu.Lock()
		if len(h.forks) > 0 && r.IntN(4) > 0 {
			s = h.forks[r.IntN(len(h.forks))]
		}
		removed := h.removed[s]
		h.removed[s] = true // from now on nothing of it is checked
		h.mu.Unlock()
		if removed {
			continue
		}
		res := h.run(ctx, roleOther, nil, "rm", s)
		if ctx.Err() != nil {
			return
		}
		if res.code == 0 || strings.Contains(res.stderr, "meanwhile") {
			h.removals.Add(1)
		} else if !gone(res.stderr) {
			h.problem("rm %s: exit %d: %s", s, res.code, res.stderr)
		}
	}
}

// chaos SIGKILLs or pauses a random writer, forker or gc process.
func (h *harness) chaos(ctx context.Context, r *rand.Rand) {
	for ctx.Err() == nil {
		sleep(ctx, time.Duration(50+r.IntN(300))*time.Millisecond)
		h.procMu.Lock()
		var victims []*os.Process
		for p, role := range h.procs {
			if role != roleOther && !h.paused[p] {
				victims = append(victims, p)
			}
		}
		sort.Slice(victims, func(i, j int) bool { return victims[i].Pid < victims[j].Pid })
		var p *os.Process
		if len(victims) > 0 {
			p = victims[r.IntN(len(victims))]
		}
		kill := r.IntN(3) == 0
		if p != nil {
			if kill {
				if p.Signal(syscall.SIGKILL) == nil {
					h.kills.Add(1)
				}
			} else if pause.Stop(p) == nil { // never on Windows
				h.paused[p] = true
				h.pauses.Add(1)
			} else {
				p = nil
			}
		}
		h.procMu.Unlock()
		if p == nil || kill {
			continue
		}
		// Longer than gc's grace (zero) and than several gc runs.
		d := time.Duration(300+r.IntN(2700)) * time.Millisecond
		go func() {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
			}
			h.procMu.Lock()
			if h.paused[p] {
				pause.Continue(p)
				delete(h.paused, p)
			}
			h.procMu.Unlock()
		}()
	}
}

// resumeAll continues any process still stopped.
func (h *harness) resumeAll() {
	h.procMu.Lock()
	defer h.procMu.Unlock()
	for p := range h.paused {
		pause.Continue(p)
	}
	h.paused = map[*os.Process]bool{}
}

// check runs the final checks: two gc runs, every acknowledged step of
// every session not removed read back, log of every live session, and
// verify.
func (h *harness) check(ctx context.Context) {
	for i := 0; i < 2; i++ {
		res := h.run(ctx, roleOther, nil, "gc", "--grace", "0s", "--json")
		if res.code != 0 {
			h.problem("final gc: exit %d: %s", res.code, res.stderr)
		} else if m := deletedRe.FindStringSubmatch(res.stdout); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			h.deleted.Add(n)
			h.gcRuns.Add(1)
		}
	}
	type item struct {
		session string
		n       uint64
		doc     []byte
	}
	var items []item
	var sessions []string
	h.mu.Lock()
	for s, steps := range h.acked {
		if h.removed[s] {
			continue
		}
		sessions = append(sessions, s)
		for n, doc := range steps {
			if n >= h.base[s] {
				items = append(items, item{s, n, doc})
			}
		}
	}
	h.mu.Unlock()
	sort.Strings(sessions)
	sort.Slice(items, func(i, j int) bool {
		if items[i].session != items[j].session {
			return items[i].session < items[j].session
		}
		return items[i].n < items[j].n
	})
	work := make(chan item)
	var wg sync.WaitGroup
	var checked atomic.Int64
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				ref := fmt.Sprintf("%s@%d", it.session, it.n)
				res := h.run(ctx, roleOther, nil, "show", ref)
				got := strings.TrimSuffix(res.stdout, "\n")
				switch {
				case res.code != 0:
					h.problem("show %s (acknowledged): exit %d: %s", ref, res.code, res.stderr)
				case got != string(it.doc):
					h.problem("show %s: state differs from the acknowledged one", ref)
				default:
					checked.Add(1)
				}
			}
		}()
	}
	for _, it := range items {
		work <- it
	}
	close(work)
	wg.Wait()
	h.rep.StepsChecked = checked.Load()
	for _, s := range sessions {
		if res := h.run(ctx, roleOther, nil, "log", s); res.code != 0 {
			h.problem("log %s: exit %d: %s", s, res.code, res.stderr)
		} else {
			h.rep.SessionsLogged++
		}
	}
	if res := h.run(ctx, roleOther, nil, "verify"); res.code != 0 {
		h.problem("verify: exit %d: %s %s", res.code, strings.TrimSpace(res.stdout), res.stderr)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
