package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/s3test"
)

// chatN is step n of a chat that appends a 2 KB message a step: each
// state reaches every earlier message, so the step that merges the newest
// step objects into a pack copies a blob out of each of them.
func chatN(n int) string {
	var b strings.Builder
	b.WriteString(`{"messages":[`)
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"step":%d,"text":"%s"}`, i, strings.Repeat(string(rune('a'+i%26)), 2000+i))
	}
	fmt.Fprintf(&b, `],"step":%d}`, n)
	return b.String()
}

// testMergeReadsNothing: a chat of 33 CLI commits, each in a fresh
// process, crosses a compaction (DefaultFanout 32). The merging step
// takes the objects it merges from the copies this machine kept under
// $XDG_CACHE_HOME/cairn/objects, so it too makes no LIST and no GET but
// the head cache's check of its head: before, it read each merged object
// back from the store (32 GETs here).
func testMergeReadsNothing(t *testing.T, a *machine) {
	const steps = 33
	merges := 0
	for i := 1; i <= steps; i++ {
		r := a.commit("chat", chatN(i))
		if r.Step != uint64(i) {
			t.Fatalf("commit %d made step %d", i, r.Step)
		}
		if r.Requests.Put > 1 {
			merges++
		}
		// The one GET checks the cached head is still the store's.
		if i > 1 && (r.Requests.Get != 1 || r.Requests.List != 0) {
			t.Errorf("commit of step %d made %+v, want 1 GET, 0 LIST", i, r.Requests)
		}
	}
	if merges == 0 {
		t.Fatalf("no commit of %d steps wrote a pack: no merge to test", steps)
	}
	a.checkHead("chat", steps, chatN(steps))
}

func TestCLIMergeReadsNothingLocal(t *testing.T) {
	testMergeReadsNothing(t, localMachine(t, cairnBinary(t), t.TempDir()))
}

func TestCLIMergeReadsNothingMinIO(t *testing.T) {
	b := s3test.StartMinIO(t)
	testMergeReadsNothing(t, minioMachine(t, cairnBinary(t), b, "merge"))
}
