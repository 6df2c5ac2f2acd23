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

// TestRunRestartsAfterBinaryRemoved: each start of the command goes
// through the cairn binary (its guard); an upgrade that removes the
// binary cairn run was started from must not leave the run unable to
// restart its command.
func TestRunRestartsAfterBinaryRemoved(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "cairn")
	orig, err := os.ReadFile(cairnBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, orig, 0o755); err != nil {
		t.Fatal(err)
	}
	store, gone := filepath.Join(dir, "store"), filepath.Join(dir, "gone")
	// The first start waits for the binary to go, then fails; the
	// restart marks the session done.
	cmd := exec.Command(bin, "--store", store, "run", "--session", "s", "--restart", "2", "--", "sh", "-c",
		`if [ "$CAIRN_ATTEMPT" = 0 ]; then while [ ! -e "$0" ]; do sleep 0.02; done; exit 1; fi; echo ok > "$0.restarted"`, gone)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gone, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("cairn run whose binary was removed: %v\n%s", err, out.String())
	}
	if _, err := os.Stat(gone + ".restarted"); err != nil {
		t.Fatalf("the command was not restarted after the binary was removed:\n%s", out.String())
	}
}
