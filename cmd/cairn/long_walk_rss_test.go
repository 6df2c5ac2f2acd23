package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/rusage"
)

// TestLongWalksKeepMemoryFlat: log, replay and verify read each step of
// a history about once, but through the workspace's default cache, which
// kept every step object they read up to 256 MiB: a log of a
// 100,000-step session peaked at 400 MB, a replay at 650 MB, a verify at
// 675 MB. They keep a small cache now, as export does. Here 400 steps of about 200 KB each
// (80 MB of step objects) must be walked in well under that.
func TestLongWalksKeepMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("commits 80 MB")
	}
	t.Setenv("CAIRN_CACHE_DIR", "off")
	const n, bound = 400, 64 << 20
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
	bin := cairnBinary(t)
	for _, args := range [][]string{{"log", "s"}, {"log", "s", "--json"}, {"replay", "s"}, {"verify", "s"}} {
		cmd := exec.Command(bin, append(args, "--store", dir)...)
		// The collector's default pacing, not the short-process one
		// (heap.go), whose slack is not what is measured here.
		cmd.Env = append(os.Environ(), "GOGC=100")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("cairn %v: %v\n%s", args, err, stderr.Bytes())
		}
		rss := rusage.MaxRSS(cmd.ProcessState)
		if rss == 0 {
			t.Logf("cairn %v: peak RSS not known on %s", args, runtime.GOOS)
			continue
		}
		t.Logf("cairn %v over %d steps: peak RSS %d MiB", args, n, rss>>20)
		if rss > bound {
			t.Errorf("cairn %v over %d steps: peak RSS %d MiB, want at most %d MiB", args, n, rss>>20, bound>>20)
		}
	}
}
