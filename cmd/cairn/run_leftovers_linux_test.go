package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunStopsWhatTheCommandLeftRunning: a command that exits leaving a
// process it started in the background (sh -c 'python agent.py &', a
// tool call's helper, a loop that forked) left it running: through the
// restart, beside the command started again from the head, two loops
// committing to one session, and after cairn run itself had ended. The
// command's process group is now ended with it, before a restart and at
// the end of the run.
func TestRunStopsWhatTheCommandLeftRunning(t *testing.T) {
	bin := cairnBinary(t)
	dir := t.TempDir()
	store, pids, seen := filepath.Join(dir, "store"), filepath.Join(dir, "pids"), filepath.Join(dir, "seen")
	// Each start leaves a sleep behind and fails; the restart first says
	// whether the one the first start left is still running.
	cmd := exec.Command(bin, "--store", store, "run", "s", "--restart", "1", "--", "sh", "-c", `
		if [ "$CAIRN_ATTEMPT" = 1 ]; then
			p=$(head -n 1 "$0")
			if [ -r /proc/$p/stat ] && ! grep -q ') Z' /proc/$p/stat; then echo running > "$1"; else echo gone > "$1"; fi
		fi
		sleep 300 >/dev/null 2>&1 &
		echo $! >> "$0"
		exit 1`, pids, seen)
	cmd.Env = append(os.Environ(), "CAIRN_CACHE_DIR=off")
	cmd.Stdin = nil // not a terminal: the command has a group of its own
	out, err := cmd.CombinedOutput()
	b, _ := os.ReadFile(pids)
	var left []int
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		left = append(left, pid)
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	}
	if err == nil || len(left) != 2 {
		t.Fatalf("cairn run: %v, background processes %v, want exit 1 after two starts\n%s", err, left, out)
	}
	if b, _ := os.ReadFile(seen); strings.TrimSpace(string(b)) != "gone" {
		t.Errorf("the restart found the process the first start left behind %s", strings.TrimSpace(string(b)))
	}
	for _, pid := range left {
		for deadline := time.Now().Add(5 * time.Second); alive(pid); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Errorf("pid %d, started in the background by the command, outlived cairn run", pid)
				break
			}
		}
	}
}
