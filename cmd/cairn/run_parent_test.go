package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitPidFile waits for a child to write its pid to path.
func waitPidFile(t *testing.T, path string, run *exec.Cmd, stderr *os.File) int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("pid file %q: %v", b, err)
			}
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	run.Process.Kill()
	b, _ := os.ReadFile(stderr.Name())
	t.Fatalf("the command under cairn run never started\n%s", b)
	return 0
}

// alive reports whether pid is a process that has not exited (a zombie,
// exited but not yet reaped by init, counts as gone).
func alive(pid int) bool {
	if signal0(pid) != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true // no procfs: kill(0) is all we know
	}
	// pid (comm) S ...: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// waitGone waits for pid to exit; a process that is still there a minute
// after its supervisor died is a failure.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			killPid(pid)
			t.Fatalf("%s (pid %d) outlived cairn run", what, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRunChildDiesWithSIGKILLedParent: a SIGKILLed cairn run takes its
// command down with it (issue 15 item 10: the command ran on until its
// next commit failed). Linux only: the parent-death signal.
func TestRunChildDiesWithSIGKILLedParent(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("needs Linux")
	}
	bin, exe := cairnBinary(t), testExecutable(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	run := exec.Command(bin, "--store", filepath.Join(dir, "store"), "run", "--session", "p", "--", exe)
	run.Env = append(os.Environ(), "CAIRN_TEST_CHILD=sleep", "CHILD_PIDFILE="+pidFile)
	// A file, not a pipe: a command that outlives cairn run would hold
	// a pipe open and hang Wait.
	stderr := stderrFile(t)
	run.Stdout, run.Stderr = stderr, stderr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	child := waitPidFile(t, pidFile, run, stderr)
	if err := run.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	run.Wait()
	waitGone(t, child, "the command")
}

// TestRunTermStopsProcessGroup: SIGTERM to cairn run reaches every
// process of its command's group, so a shell wrapper's children go too.
func TestRunTermStopsProcessGroup(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no SIGTERM nor process-group kill (docs/agents.md)")
	}
	bin := cairnBinary(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	// The shell starts a child in the background and waits for it; only
	// the shell is cairn run's direct child.
	run := exec.Command(bin, "--store", filepath.Join(dir, "store"), "run", "--session", "g", "--",
		"sh", "-c", `sleep 600 & echo $! > "$0"; wait`, pidFile)
	// A file, not a pipe: a command that outlives cairn run would hold
	// a pipe open and hang Wait.
	stderr := stderrFile(t)
	run.Stdout, run.Stderr = stderr, stderr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	grandchild := waitPidFile(t, pidFile, run, stderr)
	if err := run.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	run.Wait()
	waitGone(t, grandchild, "the command's own child")
}

// TestRunMessagesOnePrefix: cairn run's messages carry one "cairn run:"
// each (issue 15 item 10: "cairn run: run: ...").
func TestRunMessagesOnePrefix(t *testing.T) {
	store := t.TempDir()
	_, errs, code := cli(t, store, "", "run", "--session", "m", "--", "false")
	if code != 1 || !strings.Contains(errs, "gave up after 1 failed start in a row") {
		t.Fatalf("run of false: exit %d, %q", code, errs)
	}
	for _, line := range strings.Split(strings.TrimSpace(errs), "\n") {
		if strings.Count(line, "run:") != 1 || !strings.HasPrefix(line, "cairn run: ") {
			t.Fatalf("message %q: want one cairn run: prefix", line)
		}
	}
}

// testExecutable is this test binary, which acts as a child process
// when CAIRN_TEST_CHILD is set (see TestMain).
func testExecutable(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func stderrFile(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
