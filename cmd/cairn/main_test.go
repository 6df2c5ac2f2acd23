package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/runner"
	"github.com/cairnlog/cairn/internal/s3test"
)

// TestMain shares one MinIO among the package's tests, and lets the test
// binary act as an agent process (CAIRN_TEST_CHILD) for tests that need
// one process to do many steps.
func TestMain(m *testing.M) {
	if os.Getenv(runner.GuardEnv) != "" {
		// In-process cairn run tests start this binary as their guard.
		os.Exit(runner.GuardMain(os.Args[1:]))
	}
	if os.Getenv("CAIRN_TEST_CHILD") == "cli-killed-after-landing" {
		// The CLI, SIGKILLed once a commit's step has landed and
		// before the run record hears of it.
		landed = func() {
			killPid(os.Getpid())
			select {}
		}
		os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if mode := os.Getenv("CAIRN_TEST_CHILD"); mode != "" {
		if err := runChild(mode); err != nil {
			fmt.Fprintf(os.Stderr, "child %s: %v\n", mode, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// commit --dir keeps a stat cache under $XDG_CACHE_HOME: not the
	// user's while testing. One fixed directory (s3test.Main exits, so
	// nothing here could remove a fresh one), bounded by the cache's own
	// pruning.
	os.Setenv("XDG_CACHE_HOME", filepath.Join(os.TempDir(), "cairn-cli-test-cache"))
	s3test.Main(m)
}

// runChild runs a child mode.
//
// "commit-steps": commit agentDoc(1..$CHILD_STEPS) to session $CHILD_SESSION
// of $CAIRN_STORE through one cairn.Session, as one agent process would,
// and print the last step's number, id and the SHA-256 of its state as JSON.
//
// "sleep": write this process's pid to $CHILD_PIDFILE and sleep until
// killed (a command under cairn run that never ends by itself).
func runChild(mode string) error {
	if mode == "sleep" {
		if err := os.WriteFile(os.Getenv("CHILD_PIDFILE"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			return err
		}
		select {}
	}
	if mode != "commit-steps" {
		return fmt.Errorf("unknown child mode %q", mode)
	}
	ctx := context.Background()
	steps, err := strconv.Atoi(os.Getenv("CHILD_STEPS"))
	if err != nil {
		return fmt.Errorf("CHILD_STEPS: %w", err)
	}
	ws, err := cairn.Open(ctx, "")
	if err != nil {
		return err
	}
	defer ws.Close()
	s, err := ws.Session(os.Getenv("CHILD_SESSION"))
	if err != nil {
		return err
	}
	var last *cairn.Step
	var doc []byte
	for n := 1; n <= steps; n++ {
		doc = agentDoc(n)
		if last, err = s.Commit(ctx, cairn.JSON(doc), cairn.CommitOptions{Record: []byte(fmt.Sprintf(`{"n":%d}`, n))}); err != nil {
			return err
		}
	}
	sum := sha256.Sum256(doc)
	return json.NewEncoder(os.Stdout).Encode(childResult{Step: last.Number, ID: last.ID.String(), SHA256: hex.EncodeToString(sum[:]), Requests: ws.Requests()})
}

type childResult struct {
	Step     uint64
	ID       string
	SHA256   string
	Requests cairn.Requests
}

// agentDoc is an agent's state after step n, compact JSON whose key order,
// number text and escapes must survive exactly: a chat that grows by a
// few hundred bytes a step, a scratchpad and a plan.
func agentDoc(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"task":"cross-machine","messages":[`)
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"role":"assistant","content":"step %d: %s","tokens":%d}`, i, strings.Repeat(fmt.Sprintf("w%d ", i*7), 40), 100+i)
	}
	fmt.Fprintf(&b, `],"scratchpad":"caf\u00e9 at step %d","plan":{"zeta":1.50,"alpha":1e400,"next":%d}}`, n, n+1)
	return []byte(b.String())
}
