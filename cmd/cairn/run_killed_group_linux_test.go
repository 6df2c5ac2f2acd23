package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnlog/cairn/internal/s3test"
)

// TestRunKilledTakesItsGroup: `cairn run` SIGKILLed (a worker's supervisor
// killed by the OOM killer or `kill -9`) must take down the whole loop,
// not only its direct child. The command here is a wrapper, as many are
// (sh -c 'python agent.py'): the kernel's parent-death signal killed the
// shell and left the loop it started running on, free to commit beside
// the worker that resumed the session on another machine, paying for its
// model calls twice. The command's group now goes with the run.
func TestRunKilledTakesItsGroup(t *testing.T) {
	b := s3test.StartMinIO(t)
	bin := cairnBinary(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "loop.pid")
	env := append(processEnv(t, b, t.TempDir()),
		fmt.Sprintf("CAIRN_STORE=minio://%s/%s/group?secure=false", b.Host, b.Name))
	// The loop: a grandchild of cairn run, which writes its pid and runs on.
	cmd := exec.Command(bin, "run", "--session", "s", "--", "sh", "-c",
		`sleep 300 & echo $! > "$0"; wait`, pidFile)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // not in the test's group
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var loop int
	for deadline := time.Now().Add(30 * time.Second); loop == 0; {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			loop, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		} else if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the loop under cairn run never started")
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	t.Cleanup(func() { syscall.Kill(loop, syscall.SIGKILL) })
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	for deadline := time.Now().Add(5 * time.Second); alive(loop); {
		if time.Now().After(deadline) {
			t.Fatalf("the loop (pid %d) outlived cairn run killed with SIGKILL", loop)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
