package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/minio"
	"github.com/cairnlog/cairn/internal/s3test"
)

// openMinIO opens the workspace under prefix of b directly (no proxy),
// in this process.
func openMinIO(t *testing.T, b *s3test.Bucket, prefix string) (*cairn.Workspace, cas.Store) {
	t.Helper()
	st, err := minio.Open(context.Background(), b.Name, prefix, minio.Options{
		Endpoint: b.Host, Region: b.Region, AccessKey: b.AccessKey, SecretKey: b.SecretKey,
	})
	if err != nil {
		t.Fatal(err)
	}
	return cairn.OpenStore(st), st
}

type procResult struct {
	pid            int
	code           int
	stdout, stderr string
}

// TestFencing16Processes: 16 real `cairn commit` processes resume one
// session on MinIO and commit its next step at the same moment, 50 times.
// Every process reads the head first; the proxy holds the step PUTs until
// all 16 have sent theirs and then lets them reach MinIO together, so all
// 16 want the same slot. Every round exactly one wins; the other 15 exit
// 3 naming the winner's process; afterwards the chain is steps 1..50,
// each the child of the one before, nothing else was written, and verify
// is clean.
func TestFencing16Processes(t *testing.T) {
	const procs, rounds = 16, 50
	b := s3test.StartMinIO(t)
	bin := cairnBinary(t)
	px := newS3Proxy(t, b.Endpoint)
	store := fmt.Sprintf("minio://%s/%s/fence?secure=false", px.Host, b.Name)
	env := processEnv(t, b, t.TempDir())
	host, _ := os.Hostname()
	winnerDoc := make(map[int]string)    // round -> state the winner committed
	winnerRec := make(map[int]string)    // round -> the winner's step record
	winnerWriter := make(map[int]string) // round -> host/pid of the winner
	start := time.Now()
	for r := 1; r <= rounds; r++ {
		px.holdSteps(procs)
		res := make([]procResult, procs)
		docs, recs := make([]string, procs), make([]string, procs)
		var wg sync.WaitGroup
		for i := range procs {
			// Each writer hands over its own state, the same every round,
			// so the layout stays at most 16 objects and a resume stays
			// cheap: 800 processes run in this test.
			docs[i] = fmt.Sprintf(`{"writer":%d,"plan":{"score":1.50}}`, i)
			recs[i] = fmt.Sprintf(`{"round":%d,"writer":%d}`, r, i)
			cmd := exec.Command(bin, "--store", store, "commit", "fence", "-", "--json", "--record", recs[i])
			cmd.Env = env
			cmd.Stdin = strings.NewReader(docs[i])
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			res[i].pid = cmd.Process.Pid
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd.Wait()
				res[i].code = cmd.ProcessState.ExitCode()
				res[i].stdout, res[i].stderr = out.String(), errb.String()
			}()
		}
		wg.Wait()
		if px.timedOut() {
			t.Fatalf("round %d: not all %d writers reached the step PUT within %v: %+v", r, procs, barrierTimeout, res)
		}
		winner := -1
		for i, p := range res {
			switch p.code {
			case 0:
				if winner >= 0 {
					t.Fatalf("round %d: writers %d and %d both won: %q %q", r, winner, i, res[winner].stdout, p.stdout)
				}
				winner = i
			case 3:
			default:
				t.Fatalf("round %d: writer %d exited %d: %s", r, i, p.code, p.stderr)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer won: %+v", r, res)
		}
		var won struct{ Step uint64 }
		if err := json.Unmarshal([]byte(res[winner].stdout), &won); err != nil || won.Step != uint64(r) {
			t.Fatalf("round %d: winner printed %q", r, res[winner].stdout)
		}
		holder := fmt.Sprintf("%s/%d", host, res[winner].pid)
		want := fmt.Sprintf("cairn commit: conflict on fence@%d: another writer already wrote this step (held by %s)\n", r, holder)
		for i, p := range res {
			if i != winner && (p.stderr != want || p.stdout != "") {
				t.Fatalf("round %d: loser %d said %q on stderr and %q on stdout, want %q and nothing", r, i, p.stderr, p.stdout, want)
			}
		}
		winnerDoc[r], winnerRec[r], winnerWriter[r] = docs[winner], recs[winner], holder
	}
	elapsed := time.Since(start)

	// The chain, read directly from MinIO by a fresh workspace.
	ctx := context.Background()
	ws, st := openMinIO(t, b, "fence")
	s, _ := ws.Session("fence")
	head, err := s.Head(ctx)
	if err != nil || head.Number != rounds {
		t.Fatalf("head = %v, %v; want step %d", head, err, rounds)
	}
	var prev *cairn.Step
	for n := 1; n <= rounds; n++ {
		step, err := s.Step(ctx, uint64(n))
		if err != nil {
			t.Fatalf("step %d: %v", n, err)
		}
		switch {
		case n == 1 && step.Parent != nil:
			t.Fatalf("step 1 has parent %+v", step.Parent)
		case n > 1 && (step.Parent == nil || *step.Parent != cairn.StepRef{Session: "fence", Number: prev.Number, ID: prev.ID.String()}):
			t.Fatalf("step %d has parent %+v, want fence@%d %s", n, step.Parent, prev.Number, prev.ID)
		}
		if step.Writer != winnerWriter[n] || string(step.Record) != winnerRec[n] {
			t.Fatalf("step %d written by %s with record %s, but %s won the round with %s", n, step.Writer, step.Record, winnerWriter[n], winnerRec[n])
		}
		doc, err := step.JSON(ctx)
		if err != nil || string(doc) != winnerDoc[n] {
			t.Fatalf("step %d state = %s, %v; want the winner's %s", n, doc, err, winnerDoc[n])
		}
		prev = step
	}
	// Nothing a loser wrote is visible: the prefix holds exactly the
	// session marker, the 50 steps and the head hint written at step 32.
	var keys []string
	if err := st.List(ctx, "", "", func(i cas.Info) error { keys = append(keys, i.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	wantKeys := []string{"sessions/fence", "steps/fence/head"}
	for n := 1; n <= rounds; n++ {
		wantKeys = append(wantKeys, fmt.Sprintf("steps/fence/%020d", n))
	}
	sort.Strings(wantKeys)
	if strings.Join(keys, " ") != strings.Join(wantKeys, " ") {
		t.Fatalf("keys under the prefix:\n%v\nwant\n%v", keys, wantKeys)
	}
	cmd := exec.Command(bin, "--store", store, "verify", "fence")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasSuffix(string(out), ": 0 problems\n") {
		t.Fatalf("cairn verify: %v\n%s", err, out)
	}
	t.Logf("%d rounds of %d processes in %v: one winner and %d exit-3 losers naming it each round; %s",
		rounds, procs, elapsed.Round(time.Millisecond), procs-1, strings.TrimSpace(string(out)))
}
