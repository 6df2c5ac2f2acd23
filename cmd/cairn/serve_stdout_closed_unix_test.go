//go:build unix

package main

import (
	"bufio"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// TestServeStdoutClosed: cairn serve started with its stdout closed
// (cairn serve >&-) says the address it serves on to stderr, saying
// why, and serves there. It served unannounced: the Go runtime puts
// /dev/null in place of a closed stdout, so the address went nowhere,
// on a port (--listen 127.0.0.1:0) no client could learn.
func TestServeStdoutClosed(t *testing.T) {
	bin := cairnBinary(t)
	store := filepath.Join(t.TempDir(), "store")
	cmd := exec.Command("sh", "-c", `exec "$0" --store "$1" serve --listen 127.0.0.1:0 >&-`, bin, store)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(stderr).ReadString('\n')
		line <- l
	}()
	var said string
	select {
	case said = <-line:
	case <-time.After(30 * time.Second):
		// Not a measure of speed: the address is never said.
		t.Fatal("cairn serve >&- said nothing on stderr in 30 s")
	}
	m := regexp.MustCompile(`^cairn serve: (http://127\.0\.0\.1:[0-9]+) \(on stderr: standard output is closed\)\n$`).FindStringSubmatch(said)
	if m == nil {
		t.Fatalf("cairn serve >&- said %q on stderr; want its address, and why there", said)
	}
	resp, err := http.Get(m[1] + "/v1/sessions")
	if err != nil {
		t.Fatalf("GET at the address said: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET at the address said: %s", resp.Status)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(t, cmd); err != nil {
		t.Errorf("cairn serve >&- after SIGTERM: %v, want exit 0", err)
	}
}
