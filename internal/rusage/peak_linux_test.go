package rusage

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

const envChild = "CAIRN_RUSAGE_TEST_CHILD"

// TestChildPeakIsItsOwn: a child that uses little memory reports a
// small SelfPeakRSS although its parent held 256 MiB when it started it,
// while the ru_maxrss the parent reads of it (MaxRSS) carries the
// parent's peak: why a child that must measure its own peak (the large
// state test, the benchmark's phases) says it itself. The large state
// test read MaxRSS, and failed whenever an earlier test of its process
// had peaked past its 256 MiB bound.
func TestChildPeakIsItsOwn(t *testing.T) {
	if os.Getenv(envChild) != "" {
		os.Stdout.WriteString(strconv.FormatInt(SelfPeakRSS(), 10) + "\n")
		return
	}
	held := make([]byte, 256<<20)
	for i := 0; i < len(held); i += 4096 {
		held[i] = 1
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildPeakIsItsOwn$", "-test.count=1")
	cmd.Env = append(os.Environ(), envChild+"=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	own, err := strconv.ParseInt(strings.Fields(string(out))[0], 10, 64)
	if err != nil || own <= 0 {
		t.Fatalf("child said %q: %v", out, err)
	}
	inherited := MaxRSS(cmd.ProcessState)
	t.Logf("child's own peak %d MiB; ru_maxrss read of it %d MiB; parent held %d MiB", own>>20, inherited>>20, len(held)>>20)
	if own > 64<<20 {
		t.Errorf("child's own peak RSS %d MiB, want well under the parent's 256 MiB", own>>20)
	}
	held[len(held)-1] = 2 // held until the child ended
}
