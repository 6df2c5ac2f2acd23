package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnlog/cairn/internal/s3test"
)

// workDirAgent is an agent loop over a directory state: on a new session
// it writes a, commits the directory, writes the file its second
// argument names (none if empty) without committing it, says it is ready
// and works on; on a session with steps it writes what it found (the
// step and the files) to its third argument and exits 0.
const workDirAgent = `bin=$0 extra=$1 found=$2 ready=$3
if [ "$CAIRN_STEP" = 0 ]; then
	echo a > "$CAIRN_STATE_DIR/a"
	"$bin" commit "$CAIRN_SESSION" --dir "$CAIRN_STATE_DIR" || exit 1
	if [ -n "$extra" ]; then echo uncommitted > "$CAIRN_STATE_DIR/$extra"; fi
	touch "$ready"
	sleep 300
fi
echo "step=$CAIRN_STEP files=$(ls "$CAIRN_STATE_DIR" | tr '\n' ' ')" > "$found"`

// workDirRun is one worker's `cairn run --dir` of workDirAgent against
// a MinIO bucket, with its own home (and so its own local caches).
type workDirRun struct {
	bin, dir, found, ready string
	env                    []string
}

func newWorkDirRun(t *testing.T, b *s3test.Bucket, prefix string) *workDirRun {
	tmp := t.TempDir()
	return &workDirRun{
		bin: cairnBinary(t), dir: filepath.Join(tmp, "work"),
		found: filepath.Join(tmp, "found"), ready: filepath.Join(tmp, "ready"),
		env: append(processEnv(t, b, filepath.Join(tmp, "home")),
			fmt.Sprintf("CAIRN_STORE=minio://%s/%s/%s?secure=false", b.Host, b.Name, prefix)),
	}
}

// command is the same `cairn run` every time: a restarted container's.
func (w *workDirRun) command(extra string) *exec.Cmd {
	cmd := exec.Command(w.bin, "run", "--session", "s", "--dir", w.dir, "--",
		"sh", "-c", workDirAgent, w.bin, extra, w.found, w.ready)
	cmd.Env = w.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // not in the test's group
	return cmd
}

// killMidRun starts the run and SIGKILLs it once the agent committed
// its first step (and wrote extra beside it).
func (w *workDirRun) killMidRun(t *testing.T, extra string) {
	t.Helper()
	cmd := w.command(extra)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(w.ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the agent under cairn run never committed:\n%s", out.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}

// rerun runs the same command again and returns its exit code and output.
func (w *workDirRun) rerun(t *testing.T) (int, string) {
	t.Helper()
	cmd := w.command("")
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, string(out)
}

// cli runs the cairn binary as this worker (its store and caches).
func (w *workDirRun) cli(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(w.bin, args...)
	cmd.Env = w.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cairn %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (w *workDirRun) files(t *testing.T) []string {
	t.Helper()
	des, err := os.ReadDir(w.dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

// TestRunKilledTakesOverItsWorkDir: `cairn run --dir D` SIGKILLed (the
// OOM killer, a container restarted by its orchestrator with D on a kept
// volume) left D full, and the same command run again refused it for not
// being empty (exit 2) until someone emptied it by hand: a restarted
// container looped on that error for ever. The rerun now takes D over:
// the agent's uncommitted work is committed as the next step and the
// agent resumes from it; a D that holds the head resumes as it is.
func TestRunKilledTakesOverItsWorkDir(t *testing.T) {
	b := s3test.StartMinIO(t)
	t.Run("uncommitted work", func(t *testing.T) {
		w := newWorkDirRun(t, b, "work")
		w.killMidRun(t, "b")
		if got := w.files(t); !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("the killed run left %v in its work directory, want [a b]", got)
		}
		code, out := w.rerun(t)
		if code != 0 || !strings.Contains(out, "committed it as s@2") {
			t.Fatalf("cairn run again after a SIGKILL: exit %d\n%s", code, out)
		}
		found, _ := os.ReadFile(w.found)
		if got, want := strings.TrimSpace(string(found)), "step=2 files=a b"; got != want {
			t.Errorf("the resumed agent found %q, want %q", got, want)
		}
		if log := w.cli(t, "log", "s"); !strings.Contains(log, "s@2") || !strings.Contains(log, "recovered") {
			t.Errorf("log after the takeover:\n%s", log)
		}
		co := filepath.Join(t.TempDir(), "co")
		w.cli(t, "checkout", "s@2", "--dir", co)
		if got, _ := os.ReadFile(filepath.Join(co, "b")); string(got) != "uncommitted\n" {
			t.Errorf("s@2's b = %q, want the uncommitted work", got)
		}
		if got := w.files(t); len(got) != 0 {
			t.Errorf("work directory after the run: %v, want empty", got)
		}
	})
	t.Run("holds the head", func(t *testing.T) {
		w := newWorkDirRun(t, b, "head")
		w.killMidRun(t, "")
		code, out := w.rerun(t)
		if code != 0 || !strings.Contains(out, "holds the state of s@1") {
			t.Fatalf("cairn run again after a SIGKILL: exit %d\n%s", code, out)
		}
		found, _ := os.ReadFile(w.found)
		if got, want := strings.TrimSpace(string(found)), "step=1 files=a"; got != want {
			t.Errorf("the resumed agent found %q, want %q", got, want)
		}
	})
}

// TestRunKilledSessionMovedElsewhere: while the killed worker's D held
// work it had not committed, another worker resumed the session and
// committed. The rerun must neither commit D over the other worker's
// step nor throw D away: it refuses (exit 3), D untouched, naming the
// commit that keeps the work; done, the next run resumes.
func TestRunKilledSessionMovedElsewhere(t *testing.T) {
	b := s3test.StartMinIO(t)
	w := newWorkDirRun(t, b, "moved")
	w.killMidRun(t, "b")
	other := newWorkDirRun(t, b, "moved") // another machine: its own caches
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "c"), []byte("other worker\n"), 0o644)
	other.cli(t, "commit", "s", "--dir", src)

	code, out := w.rerun(t)
	fix := fmt.Sprintf("cairn commit s --dir %s --expect 2", w.dir)
	if code != 3 || !strings.Contains(out, "has moved to s@2") || !strings.Contains(out, fix) {
		t.Fatalf("cairn run after the session moved elsewhere: exit %d, want 3 naming %q\n%s", code, fix, out)
	}
	if got := w.files(t); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("the refused run left %v in the work directory, want [a b] untouched", got)
	}
	if log := w.cli(t, "log", "s"); strings.Contains(log, "s@3") {
		t.Fatalf("the refused run committed over the other worker's step:\n%s", log)
	}
	w.cli(t, strings.Fields(fix)[1:]...)
	code, out = w.rerun(t)
	if code != 0 || !strings.Contains(out, "holds the state of s@3") {
		t.Fatalf("cairn run after the work was committed by hand: exit %d\n%s", code, out)
	}
}

// TestRunWorkDirRefusals: a non-empty D that no run of the session left
// is still refused (exit 2), and so is one a run of another session left;
// a D in use by a live run is refused (exit 3) rather than shared.
func TestRunWorkDirRefusals(t *testing.T) {
	b := s3test.StartMinIO(t)
	w := newWorkDirRun(t, b, "refusals")
	os.MkdirAll(w.dir, 0o755)
	os.WriteFile(filepath.Join(w.dir, "notes"), []byte("mine\n"), 0o644)
	code, out := w.rerun(t)
	if code != 2 || !strings.Contains(out, "is not empty and holds no recent step of s") {
		t.Errorf("cairn run --dir over an unrelated directory: exit %d, want 2\n%s", code, out)
	}
	os.Remove(filepath.Join(w.dir, "notes"))

	w.killMidRun(t, "b")
	cmd := exec.Command(w.bin, "run", "--session", "t", "--dir", w.dir, "--", "true")
	cmd.Env = w.env
	got, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(got), "a cairn run of session s") {
		t.Errorf("cairn run t --dir over what a run of s left: exit %d, want 2\n%s", code, got)
	}

	// A live run holds D: a second run given it refuses.
	os.Remove(w.ready)
	live := exec.Command(w.bin, "run", "--session", "u", "--dir", filepath.Join(filepath.Dir(w.dir), "live"), "--",
		"sh", "-c", `touch "$0"; sleep 300`, w.ready)
	live.Env = w.env
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { live.Process.Signal(syscall.SIGTERM); live.Wait() }()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(w.ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the live run never started its command")
		}
	}
	second := exec.Command(w.bin, "run", "--session", "u", "--dir", filepath.Join(filepath.Dir(w.dir), "live"), "--", "true")
	second.Env = w.env
	got, _ = second.CombinedOutput()
	if code := second.ProcessState.ExitCode(); code != 3 || !strings.Contains(string(got), "in use by another cairn run") {
		t.Errorf("a second cairn run on a live run's work directory: exit %d, want 3\n%s", code, got)
	}
}
