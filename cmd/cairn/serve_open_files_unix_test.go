//go:build unix

package main

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeConnsWithinOpenFiles: under a limit of 128 open files
// (ulimit -n), 200 idle connections left cairn serve answering nothing:
// the system refused every new connection before the server could close
// an idle one for it (--max-conns, 2048 by default, was never reached),
// and net/http retried its accept once a second for as long as they
// stayed. Serve now keeps its connections within the files it may open,
// says so, and refuses a --max-conns over it.
func TestServeConnsWithinOpenFiles(t *testing.T) {
	bin := cairnBinary(t)
	store := filepath.Join(t.TempDir(), "store")

	// Not a measure of speed: a serve that takes the flag never exits.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "sh", "-c", `ulimit -n 128 && exec "$0" --store "$1" serve --listen 127.0.0.1:0 --max-conns 500`, bin, store).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("serve --max-conns 500 under ulimit -n 128: %v (%s), want exit 2", err, out)
	}
	if want := "cairn serve: --max-conns 500: this process may have only 128 files open at once (ulimit -n)"; !strings.HasPrefix(string(out), want) || !strings.Contains(string(out), "give at most --max-conns 112") {
		t.Errorf("serve --max-conns 500 under ulimit -n 128 said %q; want %q…, naming the most it can keep", out, want)
	}

	cmd := exec.Command("sh", "-c", `ulimit -n 128 && exec "$0" --store "$1" serve --listen 127.0.0.1:0`, bin, store)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	m := regexp.MustCompile(`^cairn serve: http://(127\.0\.0\.1:[0-9]+)\n$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("cairn serve said %q on stdout; want its address (stderr: %s)", line, stderr.String())
	}
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range 200 {
		c, err := net.Dial("tcp", m[1])
		if err != nil {
			t.Fatalf("connection %d: %v", len(idle)+1, err)
		}
		idle = append(idle, c)
	}
	// Not a measure of speed: the request is never answered.
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Get("http://" + m[1] + "/v1/sessions")
	if err != nil {
		t.Fatalf("GET with 200 idle connections open, under ulimit -n 128: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET with 200 idle connections open: %s", resp.Status)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(t, cmd); err != nil {
		t.Errorf("cairn serve after SIGTERM: %v, want exit 0 (stderr: %s)", err, stderr.String())
	}
	if want := "cairn serve: keeping at most 112 connections open, not 2048: this process may have only 128 files open at once (ulimit -n)"; !strings.Contains(stderr.String(), want) {
		t.Errorf("serve under ulimit -n 128 said %q on stderr; want %q", stderr.String(), want)
	}
	if strings.Contains(stderr.String(), "Accept error") {
		t.Errorf("serve under ulimit -n 128 logged refused accepts: %s", stderr.String())
	}
}
