package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/fs"
	"github.com/cairnlog/cairn/internal/s3test"
)

// cairnBinary returns the cairn binary to run as a real process: $CAIRN_BIN
// (set by make test) or one built for this test.
func cairnBinary(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("CAIRN_BIN"); b != "" {
		return b
	}
	bin := filepath.Join(t.TempDir(), "cairn")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("build cairn: %v\n%s", err, out)
	}
	return bin
}

// crashKills is how many SIGKILLs each crash test deals.
func crashKills() int {
	if testing.Short() {
		return 20
	}
	return 200
}

// TestCrashKillLocal runs the crash loop on a local directory store, then
// checks that the temporary files killed puts left behind are ignored
// on read and removed by a later Open once they are old.
func TestCrashKillLocal(t *testing.T) {
	store := t.TempDir()
	crashLoop(t, cairnBinary(t), store, nil, crashKills())
	tmp := filepath.Join(store, ".tmp")
	left, _ := os.ReadDir(tmp)
	t.Logf("%d temporary files left by killed puts", len(left))
	// Plant one more, as a put killed between its write and its rename
	// would leave it, and check that reads ignore it.
	// (Conditional creates leave no temporary name on Linux: the
	// directory may not exist yet.)
	stray := filepath.Join(tmp, "put-stray")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stray, []byte("half an object"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := cli(t, store, "", "verify", "crash"); code != 0 {
		t.Fatalf("verify with a stray temp file: exit %d %s %s", code, out, errs)
	}
	if _, err := os.Stat(stray); err != nil {
		t.Fatalf("a fresh temp file was removed: %v", err)
	}
	// Once older than fs.TempMaxAge, the next Open removes them all.
	old := time.Now().Add(-fs.TempMaxAge - time.Minute)
	entries, _ := os.ReadDir(tmp)
	for _, e := range entries {
		os.Chtimes(filepath.Join(tmp, e.Name()), old, old)
	}
	if _, err := cairn.Open(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Fatalf("%d old temporary files survived Open", len(entries))
	}
}

// TestCrashKillMinIO runs the crash loop against a real MinIO server: a
// process killed mid-request leaves nothing half-written there.
func TestCrashKillMinIO(t *testing.T) {
	b := s3test.StartMinIO(t)
	t.Setenv("AWS_ACCESS_KEY_ID", b.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", b.SecretKey)
	url := fmt.Sprintf("minio://%s/%s/crash?secure=false", b.Host, b.Name)
	crashLoop(t, cairnBinary(t), url, os.Environ(), crashKills())
}

// crashLoop runs real `cairn commit` processes against store and SIGKILLs
// them at random instants until it has dealt kills kills. The instants
// are drawn from 1.5x the time a whole commit takes, timed on commits
// that are never killed (see killWindow), so kills land before, during
// and after the step's put however loaded the machine is. After every
// kill the session's head must be the last acknowledged step or a step
// a killed commit wrote whole (its state reads back exactly as one of
// the documents a commit tried), verify must be clean, and the next
// commit must succeed: a commit that was not killed and failed fails
// the test.
//
// A killed commit's put may still land after the kill: the server got
// the whole request before the process died and completes it a moment
// later, even after this loop has looked at the head. Such a step is
// one of the attempts, written whole into the slot above the head it
// read, and the loop takes it as the new truth; what must never be is
// a head below the last acknowledged step, a state nobody committed, or
// a torn one.
func crashLoop(t *testing.T, bin, store string, env []string, kills int) {
	rng := rand.New(rand.NewPCG(7, 7))
	ctx := context.Background()
	stateFile := filepath.Join(t.TempDir(), "state.json")
	// One workspace for the checks: its object cache makes each verify
	// read only the objects that are new since the last one. Every 25
	// kills, and at the end, a fresh workspace verifies from scratch.
	ws, err := cairn.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	verify := func(ws *cairn.Workspace, when string) {
		rep, err := ws.Verify(ctx, "crash")
		if err != nil || len(rep.Problems) > 0 {
			t.Fatalf("verify %s: %v %v", when, err, rep.Problems)
		}
	}
	// attempts maps every document a commit was started with to its
	// messages, so the loop can continue from whichever attempt the
	// store holds at its head.
	attempts := map[string][]string{}
	var window killWindow
	var acked uint64
	// completed counts the commits that were to be killed and finished
	// first; timed, those that were never to be.
	killed, completed, timed, landed := 0, 0, 0, 0
	msgs := []string{}
	for i := 0; killed < kills; i++ {
		msgs = append(msgs, fmt.Sprintf(`{"role":"assistant","content":"%d %s"}`, len(msgs), strings.Repeat("x", rng.IntN(6000))))
		doc := `{"messages":[` + strings.Join(msgs, ",") + `]}`
		attempts[doc] = append([]string(nil), msgs...)
		if err := os.WriteFile(stateFile, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "--store", store, "commit", "crash", "--json-file", stateFile, "--json")
		cmd.Env = env
		out, errb := &strings.Builder{}, &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, errb
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var timer *time.Timer
		timing := window.timing(i)
		if !timing {
			delay := time.Duration(rng.Int64N(int64(window.span())))
			timer = time.AfterFunc(delay, func() { cmd.Process.Signal(syscall.SIGKILL) })
		}
		err := cmd.Wait()
		took := time.Since(start)
		if timer != nil {
			timer.Stop()
		}
		var exit *exec.ExitError
		var ackedNow uint64 // the step this commit acknowledged, if it did
		switch {
		case err == nil:
			var res struct{ Step uint64 }
			if jerr := json.Unmarshal([]byte(out.String()), &res); jerr != nil || res.Step <= acked {
				t.Fatalf("acknowledged output %q after step %d", out, acked)
			}
			ackedNow = res.Step
			if timing {
				window.add(took)
				timed++
			} else {
				completed++
			}
		case !timing && errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signaled():
			killed++
		default:
			t.Fatalf("commit after %d kills failed without being killed: %v: %s", killed, err, errb)
		}
		s, _ := ws.Session("crash")
		head, err := s.Head(ctx)
		var n uint64
		if err == nil {
			n = head.Number
		}
		switch {
		case ackedNow > 0 && n != ackedNow:
			t.Fatalf("commit acknowledged step %d, head is %d (%v)", ackedNow, n, err)
		case n < acked:
			t.Fatalf("after kill %d: head is %d, last acknowledged %d (%v)", killed, n, acked, err)
		}
		if n > 0 {
			got, err := head.JSON(ctx)
			if err != nil {
				t.Fatalf("read head after kill %d: %v", killed, err)
			}
			at, ok := attempts[string(got)]
			switch {
			case ackedNow > 0 && string(got) != doc:
				t.Fatalf("head state of acknowledged step %d differs from what was committed", n)
			case !ok:
				t.Fatalf("head state after kill %d is none of the documents committed", killed)
			}
			if ackedNow == 0 && n > acked {
				landed++ // a killed commit's step, written whole
			}
			msgs = append(msgs[:0:0], at...)
		} else {
			msgs = msgs[:0]
		}
		acked = n
		verify(ws, fmt.Sprintf("after kill %d", killed))
		if ackedNow == 0 && killed%25 == 0 {
			fresh, err := cairn.Open(ctx, store)
			if err != nil {
				t.Fatal(err)
			}
			verify(fresh, fmt.Sprintf("from scratch after kill %d", killed))
		}
	}
	fresh, err := cairn.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	verify(fresh, "from scratch at the end")
	// The next commit succeeds.
	s, _ := fresh.Session("crash")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"after":"the crashes"}`)), cairn.CommitOptions{Expect: cairn.ExpectHead(acked)}); err != nil {
		t.Fatalf("commit after the last kill: %v", err)
	}
	if completed < kills/20 {
		t.Fatalf("only %d of %d commits dealt a kill completed first: the kill window (%v) is too short to test crashes mid-commit", completed, completed+killed, window.span())
	}
	t.Logf("%s: %d kills (%d of them after the step was written), %d commits completed before their kill, %d never killed, head %d, verify clean after every kill (kill window %v)",
		t.Name(), killed, landed, completed, timed, acked, window.span())
}

// killWindow times whole commits to draw kill instants from. A commit
// that may be killed cannot time one: only those that finish before
// their kill would count, the fast ones, and a window taken from them
// shrinks until nearly every commit is killed before its put, more so
// on a loaded machine. So the first timedFirst commits, and every
// timedEvery-th after them, are never killed; the window is 1.5x the
// median of the last timedKeep of those, following the machine's load.
type killWindow struct {
	took []time.Duration // the last timedKeep whole commits, oldest first
}

const (
	timedFirst = 3
	timedEvery = 8
	timedKeep  = 5
)

// timing reports whether commit i (from 0) is one to time, not kill.
func (w *killWindow) timing(i int) bool {
	return i < timedFirst || i%timedEvery == 0
}

// add records the time a commit that was never killed took.
func (w *killWindow) add(d time.Duration) {
	w.took = append(w.took, d)
	if len(w.took) > timedKeep {
		w.took = w.took[1:]
	}
}

// span is the window kill instants are drawn from: 1.5x the median of
// the recent whole commits.
func (w *killWindow) span() time.Duration {
	s := slices.Clone(w.took)
	slices.Sort(s)
	return s[len(s)/2] * 3 / 2
}
