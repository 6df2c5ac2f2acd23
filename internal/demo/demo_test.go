// Package demo holds the README's first command (demo.sh, run by make
// demo); this test runs it as make demo does.
package demo

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func cairnBinary(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("CAIRN_BIN"); b != "" {
		return b
	}
	bin := filepath.Join(t.TempDir(), "cairn")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/cairn").CombinedOutput(); err != nil {
		t.Fatalf("build cairn: %v\n%s", err, out)
	}
	return bin
}

// TestDemo runs demo.sh on a fresh default store. It must pass every
// time (issue 15 item 1: `cairn log | head -n 1` under pipefail failed
// it 2 runs in 3), and its fork must go on from the shared past, so
// that the fork's diff against the step it forks shows only its own
// step (item 20: it replaced the whole state).
func TestDemo(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("the demo needs python3 (make python)")
	}
	cmd := exec.Command("./demo.sh", cairnBinary(t))
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+t.TempDir(), "CAIRN_STORE=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("demo.sh: %v\n%s\n%s", err, out.String(), errb.String())
	}
	if errb.Len() != 0 {
		t.Fatalf("demo.sh wrote to stderr:\n%s", errb.String())
	}
	var forkDiff []string
	in := false
	for _, line := range strings.Split(out.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "== diff ") && strings.Contains(line, "-alt:"):
			in = true
		case strings.HasPrefix(line, "=="):
			in = false
		case in && line != "":
			forkDiff = append(forkDiff, strings.Join(strings.Fields(line), " "))
		}
	}
	if want := []string{"added /messages/4", "changed /scratchpad"}; strings.Join(forkDiff, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the fork's diff against the step it forks = %q, want only its own step %q\n%s", forkDiff, want, out.String())
	}
	if replay := out.String(); !strings.Contains(replay, "  assistant: step 4: thinking") || !strings.Contains(replay, "  user: try another way") {
		t.Fatalf("the replay of the fork does not show its steps' messages:\n%s", replay)
	}
	if !strings.Contains(out.String(), ": 0 problems") {
		t.Fatalf("verify did not pass:\n%s", out.String())
	}
}
