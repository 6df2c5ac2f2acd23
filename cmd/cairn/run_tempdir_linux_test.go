package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunKilledLeavesNoTempDir: a `cairn run` without --dir works in a
// temporary directory it removes at its end. Killed (SIGKILL, the OOM
// killer) it cannot, and its directory, holding the session's state,
// stayed in $TMPDIR for good: a worker killed now and then filled /tmp
// with copies of its sessions' states, readable by whoever can read
// this user's files. A later `cairn run` on the machine now removes the
// directories of runs that died; a live run's it leaves alone.
func TestRunKilledLeavesNoTempDir(t *testing.T) {
	bin := cairnBinary(t)
	tmp := t.TempDir()
	store := filepath.Join(t.TempDir(), "store")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CAIRN_") && !strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	env = append(env, "TMPDIR="+tmp, "CAIRN_CACHE_DIR=off")
	cairn := func(stdin string, args ...string) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--store", store}, args...)...)
		cmd.Env, cmd.Stdin = env, strings.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("cairn %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	cairn(`{"secret":"s3kr1t"}`, "commit", "s", "-")

	marks := t.TempDir()
	started := func(name string) string {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if b, err := os.ReadFile(filepath.Join(marks, name)); err == nil && strings.HasSuffix(string(b), "\n") {
				return strings.TrimSpace(string(b))
			}
			if time.Now().After(deadline) {
				t.Fatalf("the command under cairn run (%s) never started", name)
			}
		}
	}
	start := func(name string) *exec.Cmd {
		t.Helper()
		cmd := exec.Command(bin, "--store", store, "run", "s", "--", "sh", "-c",
			`echo "$CAIRN_STATE_DIR" > "$0"; exec sleep 300`, filepath.Join(marks, name))
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}

	// One run killed: its directory, with the state, is left behind.
	killed := start("killed")
	dead := started("killed")
	killed.Process.Signal(syscall.SIGKILL)
	killed.Wait()
	if _, err := os.Stat(filepath.Join(dead, "state.json")); err != nil {
		t.Fatalf("the killed run's work directory: %v", err)
	}
	// Old enough not to be one a run is making this very moment.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(dead, old, old); err != nil {
		t.Fatal(err)
	}
	// One run alive, as old: its directory must stay.
	live := start("live")
	liveDir := started("live")
	if err := os.Chtimes(liveDir, old, old); err != nil {
		t.Fatal(err)
	}

	cairn("", "run", "s", "--", "true")

	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		des, _ := os.ReadDir(tmp)
		var left []string
		for _, de := range des {
			left = append(left, de.Name())
		}
		t.Fatalf("the work directory of a killed cairn run is still in $TMPDIR after another run (%v); $TMPDIR holds %v", err, left)
	}
	if _, err := os.Stat(filepath.Join(liveDir, "state.json")); err != nil {
		t.Fatalf("a later cairn run removed the work directory of a live one: %v", err)
	}
	live.Process.Signal(syscall.SIGTERM)
	live.Wait()
	if _, err := os.Stat(liveDir); !os.IsNotExist(err) {
		t.Fatalf("cairn run stopped by SIGTERM left its work directory: %v", err)
	}
}
