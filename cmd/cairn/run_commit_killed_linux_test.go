package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// killedCommitAgent is an agent loop over a directory state: on a new
// session it writes a and commits the directory with the test binary
// acting as the CLI, which SIGKILLs itself once the step has landed and
// before the run record hears of it; then it writes b beside a, says it
// is ready and works on (killed with the run). On a session with steps
// it writes what it found to its second argument and exits 0.
const killedCommitAgent = `testbin=$0 found=$1 ready=$2
if [ "$CAIRN_STEP" = 0 ]; then
	echo a > "$CAIRN_STATE_DIR/a"
	CAIRN_TEST_CHILD=cli-killed-after-landing "$testbin" commit "$CAIRN_SESSION" --dir "$CAIRN_STATE_DIR"
	echo uncommitted > "$CAIRN_STATE_DIR/b"
	touch "$ready"
	sleep 300
fi
echo "step=$CAIRN_STEP files=$(ls "$CAIRN_STATE_DIR" | tr '\n' ' ')" > "$found"`

// TestRunCommitKilledAfterItsStepLanded: the command's `cairn commit
// --dir D` was killed after its step landed and before it noted the
// step in the run record; the command wrote more in D and the run was
// killed too. The re-run took the step for another worker's ("the
// session has moved to s@1 since (another worker?)") and exited 3,
// sending the user after a worker that did not exist. The commit now
// names itself in the record before it starts, so the re-run knows the
// step for its own and commits D's later work on top of it; nothing is
// lost.
func TestRunCommitKilledAfterItsStepLanded(t *testing.T) {
	bin := cairnBinary(t)
	testbin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	dir, found, ready := filepath.Join(tmp, "work"), filepath.Join(tmp, "found"), filepath.Join(tmp, "ready")
	env := append(os.Environ(), "CAIRN_STORE="+filepath.Join(tmp, "store"), "CAIRN_CACHE_DIR="+filepath.Join(tmp, "cache"))
	runCmd := func() *exec.Cmd {
		cmd := exec.Command(bin, "run", "--session", "s", "--dir", dir, "--", "sh", "-c", killedCommitAgent, testbin, found, ready)
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // not in the test's group
		return cmd
	}
	var out lockedBuffer
	first := runCmd()
	first.Stdout, first.Stderr = &out, &out
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			first.Process.Kill()
			t.Fatalf("the agent under cairn run never got past its commit:\n%s", out.String())
		}
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	cli := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("cairn %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		return string(b)
	}
	if log := cli("log", "s"); !strings.Contains(log, "s@1") {
		t.Fatalf("the killed commit's step did not land:\n%s\n%s", log, out.String())
	}
	des, _ := os.ReadDir(dir)
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	if !slices.Equal(names, []string{"a", "b"}) {
		t.Fatalf("the killed run left %v in its work directory, want [a b]\n%s", names, out.String())
	}

	again := runCmd()
	b, err := again.CombinedOutput()
	if err != nil {
		t.Fatalf("cairn run again after its commit was killed past landing: %v\n%s", err, b)
	}
	if !strings.Contains(string(b), "committed it as s@2") {
		t.Errorf("cairn run again: want D's later work committed as s@2\n%s", b)
	}
	got, _ := os.ReadFile(found)
	if s, want := strings.TrimSpace(string(got)), "step=2 files=a b"; s != want {
		t.Errorf("the resumed agent found %q, want %q", s, want)
	}
	co := filepath.Join(t.TempDir(), "co")
	cli("checkout", "s@2", "--dir", co)
	if got, _ := os.ReadFile(filepath.Join(co, "b")); string(got) != "uncommitted\n" {
		t.Errorf("s@2's b = %q, want the work written after the killed commit", got)
	}
}
