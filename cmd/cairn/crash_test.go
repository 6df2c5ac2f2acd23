package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
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

// TestCrashKill runs real `cairn commit` processes and SIGKILLs them at
// random instants. After every kill the session's head must be the last
// acknowledged step or the one in flight (fully written), verify must be
// clean, and the next commit must succeed.
func TestCrashKill(t *testing.T) {
	kills := 120
	if testing.Short() {
		kills = 20
	}
	bin := cairnBinary(t)
	store := t.TempDir()
	stateFile := filepath.Join(t.TempDir(), "state.json")
	rng := rand.New(rand.NewPCG(7, 7))
	ctx := context.Background()
	// Calibrate: kill instants spread over 1.5x the time a commit takes,
	// so kills land before, during and after the step's put.
	os.WriteFile(stateFile, []byte(`{"warmup":true}`), 0o644)
	start := time.Now()
	if out, err := exec.Command(bin, "--store", t.TempDir(), "commit", "w", "--json-file", stateFile).CombinedOutput(); err != nil {
		t.Fatalf("calibration commit: %v %s", err, out)
	}
	window := time.Since(start) * 3 / 2
	var acked uint64
	killed, completed := 0, 0
	msgs := []string{}
	for killed < kills {
		msgs = append(msgs, fmt.Sprintf(`{"role":"assistant","content":"%d %s"}`, len(msgs), strings.Repeat("x", rng.IntN(6000))))
		doc := `{"messages":[` + strings.Join(msgs, ",") + `]}`
		if err := os.WriteFile(stateFile, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "--store", store, "commit", "crash", "--json-file", stateFile, "--json")
		out := &strings.Builder{}
		cmd.Stdout = out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(rng.Int64N(int64(window)))
		timer := time.AfterFunc(delay, func() { cmd.Process.Signal(syscall.SIGKILL) })
		err := cmd.Wait()
		timer.Stop()
		if err == nil {
			var res struct{ Step uint64 }
			if jerr := json.Unmarshal([]byte(out.String()), &res); jerr != nil || res.Step != acked+1 {
				t.Fatalf("acknowledged output %q after step %d", out, acked)
			}
			acked = res.Step
			completed++
		} else {
			killed++
		}
		ws, err := cairn.Open(ctx, store)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := ws.Session("crash")
		head, err := s.Head(ctx)
		var n uint64
		if err == nil {
			n = head.Number
		}
		switch {
		case n == acked:
		case n == acked+1: // the killed commit had written its step whole
			acked = n
		default:
			t.Fatalf("after kill %d: head is %d, last acknowledged %d", killed, n, acked)
		}
		if n > 0 {
			got, err := head.JSON(ctx)
			if err != nil {
				t.Fatalf("read head after kill %d: %v", killed, err)
			}
			if int(n) == len(msgs) && string(got) != doc {
				t.Fatalf("head state after kill %d differs from what was committed", killed)
			}
		}
		rep, err := ws.Verify(ctx, "crash")
		if err != nil || len(rep.Problems) > 0 {
			t.Fatalf("verify after kill %d: %v %v", killed, err, rep.Problems)
		}
		if int(n) < len(msgs) {
			msgs = msgs[:n] // the next try commits the same step again
		}
	}
	if completed < kills/20 {
		t.Fatalf("only %d of %d commits completed: the kill window %v is too short to test crashes mid-commit", completed, completed+killed, window)
	}
	t.Logf("%d kills, %d commits completed, head %d, verify clean after every kill (window %v)", killed, completed, acked, window)
}
