//go:build unix

package main

import (
	"bufio"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
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

// TestStdoutClosedSaidAsLostOutput: a command started with its stdout
// closed (cairn log s >&-) says its output had nowhere to go, exit 1,
// as it does when stdout is a full disk, and as a Unix tool does. It
// printed into the /dev/null the Go runtime puts in a closed stdout's
// place and exited 0. A commit still lands (the step is there, as with
// a full disk: the output is what was lost); > /dev/null stays exit 0.
func TestStdoutClosedSaidAsLostOutput(t *testing.T) {
	bin := cairnBinary(t)
	store := filepath.Join(t.TempDir(), "store")
	sh := func(script string) (string, int) {
		t.Helper()
		cmd := exec.Command("sh", "-c", script, bin, store)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	if out, code := sh(`echo '{"n":1}' | "$0" --store "$1" commit s - > /dev/null`); code != 0 {
		t.Fatalf("commit > /dev/null: exit %d, %s", code, out)
	}
	const said = "standard output is closed (started with >&-)"
	for _, script := range []string{
		`"$0" --store "$1" log s >&-`,
		`"$0" --store "$1" show s >&-`,
		`"$0" --store "$1" sessions >&-`,
		`echo '{"n":2}' | "$0" --store "$1" commit s - >&-`,
	} {
		if out, code := sh(script); code != 1 || !strings.Contains(out, said) || strings.Count(out, "\n") != 1 {
			t.Errorf("%s: exit %d, %q; want exit 1 and one line saying %q", script, code, out, said)
		}
	}
	if out, code := sh(`"$0" --store "$1" log s`); code != 0 || !strings.Contains(out, "s@2") {
		t.Errorf("log after a commit with stdout closed: exit %d, %q; want s@2 there", code, out)
	}
	if out, code := sh(`"$0" --store "$1" log s > /dev/null`); code != 0 || out != "" {
		t.Errorf("log > /dev/null: exit %d, %q; want exit 0, nothing said", code, out)
	}
}
