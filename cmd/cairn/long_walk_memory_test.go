package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/cairnlog/cairn"
)

// gcLive finds the heap left live in a line of GODEBUG=gctrace=1
// ("4->6->2 MB": before, after, live).
var gcLive = regexp.MustCompile(`\d+->\d+->(\d+) MB`)

// TestLongWalksKeepMemoryFlat: log, replay and verify read each step of
// a history about once, but through the workspace's default cache, which
// kept every step object they read up to 256 MiB: a log of a
// 100,000-step session peaked at 400 MB, a replay at 650 MB, a verify at
// 675 MB. They keep a small cache now, as export does. Here 400 steps of
// about 200 KB each (80 MB of step objects) must be walked holding a
// fraction of them (41 to 92 MB live before; 8 to 12 MB now).
func TestLongWalksKeepMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("commits 80 MB")
	}
	t.Setenv("CAIRN_CACHE_DIR", "off")
	const n, bound = 400, 24 // MB
	dir := t.TempDir()
	ctx := context.Background()
	ws, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ws.Session("s")
	raw := make([]byte, 150<<10)
	for i := 1; i <= n; i++ {
		rand.Read(raw)
		doc, _ := json.Marshal(map[string]any{"step": i, "scratch": base64.StdEncoding.EncodeToString(raw)})
		if _, err := s.Commit(ctx, cairn.JSON(doc), cairn.CommitOptions{Record: json.RawMessage(`{"messages":[{"role":"assistant","content":"x"}]}`)}); err != nil {
			t.Fatal(err)
		}
	}
	ws.Close()
	for _, args := range [][]string{{"log", "s"}, {"log", "s", "--json"}, {"replay", "s"}, {"verify", "s"}, {"du"}, {"du", "s"}} {
		live, _ := liveHeapMB(t, append(args, "--store", dir)...)
		t.Logf("cairn %v over %d steps: at most %d MB live after a collection", args, n, live)
		if live > bound {
			t.Errorf("cairn %v over %d steps: %d MB live after a collection, want at most %d MB", args, n, live, bound)
		}
	}
}

// liveHeapMB runs cairn with args in a child process and returns the
// most heap any of its collections left live, in MB, and its stderr. It
// fails the test if the command fails. The collector runs at its default
// pacing (not heap.go's short-process one) and traces: the heap each
// collection left live is what the command held. The peak RSS the OS
// reports for a child is no measure here: after a vfork and exec it
// starts at this test process's own peak.
func liveHeapMB(t *testing.T, args ...string) (live int64, stderr []byte) {
	t.Helper()
	cmd := exec.Command(cairnBinary(t), args...)
	cmd.Env = append(os.Environ(), "GOGC=100", "GODEBUG=gctrace=1")
	var errs bytes.Buffer
	cmd.Stderr = &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("cairn %v: %v\n%s", args, err, errs.Bytes())
	}
	for _, m := range gcLive.FindAllSubmatch(errs.Bytes(), -1) {
		n, _ := strconv.ParseInt(string(m[1]), 10, 64)
		live = max(live, n)
	}
	return live, errs.Bytes()
}
