//go:build unix

package main

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cairnlog/cairn/internal/s3test"
)

// TestTermInterruptsLikeCtrlC: SIGTERM ends a one-shot command as
// Ctrl-C does: it stops what it waits for, says it was interrupted, exit
// 1, and commits nothing. It used to kill the process where it stood
// (exit 143 in a shell). Each command here waits for a FIFO's writer to
// send its input; the test opens the FIFO, which tells it the command
// is running, and sends SIGTERM.
func TestTermInterruptsLikeCtrlC(t *testing.T) {
	bin := cairnBinary(t)
	store := filepath.Join(t.TempDir(), "store")
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	for _, c := range []struct {
		name string
		args func(fifo string) []string
	}{
		{"commit", func(fifo string) []string { return []string{"commit", "s", "--json-file", fifo} }},
		{"export", func(fifo string) []string {
			return []string{"export", "--format", "atif", "--heads", fifo, "--out", filepath.Join(filepath.Dir(fifo), "out.jsonl")}
		}},
	} {
		fifo := filepath.Join(t.TempDir(), "in")
		if err := mkfifo(t, fifo); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, append([]string{"--store", store}, c.args(fifo)...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // until cairn opens it
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(`{"b":`)); err != nil { // half a document, then nothing
			t.Fatal(err)
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		err = waitExit(t, cmd)
		w.Close()
		if want := "cairn " + c.name + ": interrupted before it finished\n"; cmd.ProcessState.ExitCode() != 1 || stderr.String() != want {
			t.Errorf("cairn %s after SIGTERM: %v, stderr %q; want exit 1, %q", c.name, err, stderr.String(), want)
		}
		if ents, _ := os.ReadDir(filepath.Dir(fifo)); len(ents) != 1 {
			t.Errorf("cairn %s after SIGTERM left files beside its input: %v", c.name, ents)
		}
	}
	if out, _, _ := cli(t, store, "", "log", "s"); strings.Count(out, "\n") != 1 {
		t.Errorf("log after commands ended by SIGTERM:\n%s", out)
	}
}

// TestTermStopsMCP: SIGTERM stops cairn mcp as Ctrl-C or the end of its
// input does: exit 0, nothing on stderr. It killed the server (exit
// 143) in the middle of whatever it was answering.
func TestTermStopsMCP(t *testing.T) {
	c, cmd, stderr := startMCP(t, filepath.Join(t.TempDir(), "store"))
	c.call("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "cairn-test", "version": "1"},
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(t, cmd); err != nil || stderr.String() != "" {
		t.Errorf("cairn mcp after SIGTERM: %v, stderr %q; want exit 0 and nothing said", err, stderr.String())
	}
}

// TestTermCheckoutRemovesWhatItWrote: a checkout ended by SIGTERM
// removes the files it wrote and the directory it made, as one ended by
// Ctrl-C does (docs/limits.md); SIGTERM killed it and left them. The
// store is MinIO behind a proxy that holds the read of the first step's
// object, so that the checkout of step 2 has written the file step 2
// brought ("a") and waits for the one step 1 holds ("z") when the
// signal comes.
func TestTermCheckoutRemovesWhatItWrote(t *testing.T) {
	b := s3test.StartMinIO(t)
	bin := cairnBinary(t)
	target, err := url.Parse(b.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	holdKey := regexp.MustCompile(`/packs/s/`)
	held := make(chan struct{}, 16)
	var holding atomic.Bool
	var packReads atomic.Int64
	rp := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The first read of the pack is of its index; the second, of the
		// file's chunks, waits.
		if holding.Load() && r.Method == http.MethodGet && holdKey.MatchString(r.URL.Path) && packReads.Add(1) > 1 {
			held <- struct{}{}
			<-r.Context().Done() // until the client goes
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	store := fmt.Sprintf("minio://%s/%s/term?secure=false", strings.TrimPrefix(proxy.URL, "http://"), b.Name)
	env := append(processEnv(t, b, t.TempDir()), "CAIRN_CACHE_DIR=off")
	cairn := func(args ...string) (string, int) {
		cmd := exec.Command(bin, append([]string{"--store", store}, args...)...)
		cmd.Env = env
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	src := t.TempDir()
	big := make([]byte, 17<<20) // past the spill threshold (16 MiB): its chunks go to a pack of their own
	rand.Read(big)
	if err := os.WriteFile(filepath.Join(src, "z"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := cairn("commit", "s", "--dir", src); code != 0 {
		t.Fatal(out)
	}
	if err := os.WriteFile(filepath.Join(src, "a"), []byte("step 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := cairn("commit", "s", "--dir", src); code != 0 {
		t.Fatal(out)
	}
	holding.Store(true)
	dir := filepath.Join(t.TempDir(), "co", "out")
	cmd := exec.Command(bin, "--store", store, "checkout", "s@2", "--dir", dir)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the checkout never read z's chunks: %s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); err != nil {
		t.Fatalf("the checkout did not write a before it read z's chunks: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = waitExit(t, cmd)
	if want := "cairn checkout: interrupted before it finished\n"; cmd.ProcessState.ExitCode() != 1 || stderr.String() != want {
		t.Errorf("checkout after SIGTERM: %v, stderr %q; want exit 1, %q", err, stderr.String(), want)
	}
	if _, err := os.Lstat(filepath.Dir(dir)); !os.IsNotExist(err) {
		ents, _ := os.ReadDir(dir)
		t.Errorf("checkout ended by SIGTERM left %s behind (%v): %v", dir, err, ents)
	}
}

// waitExit waits for cmd, and fails the test if it is still running a
// minute on: not a measure of speed, only of a command that never ends.
func waitExit(t *testing.T, cmd *exec.Cmd) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s still running a minute after SIGTERM", strings.Join(cmd.Args, " "))
		return nil
	}
}
