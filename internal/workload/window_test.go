package workload

import (
	"encoding/hex"
	"testing"
)

// TestAppendWindowFlat: a windowed session's document stays the same size
// however long it runs. The window of messages was always flat, but the
// plan gained a task every ten steps and never lost one, so the document
// grew about tenfold between steps 10,000 and 100,000, and a long-session
// benchmark measured the generator's growth instead of the writer's.
func TestAppendWindowFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 100,000 steps")
	}
	a := NewAppend(AppendOptions{Seed: 1, Window: 8})
	// The mean size over 500 steps: one step in 20 brings a 50 KB tool
	// output into the window, so a single step's size is noisy.
	mean := func(last int) float64 {
		total := 0
		for a.Step() < last {
			doc, _ := a.Next()
			if a.Step() > last-500 {
				total += len(doc)
			}
		}
		return float64(total) / 500
	}
	early := mean(10_000)
	late := mean(100_000)
	t.Logf("mean document: %.0f bytes at step 10k, %.0f at 100k", early, late)
	if late > 1.5*early {
		t.Fatalf("the windowed document grew from %.0f bytes at step 10k to %.0f at 100k; want within 1.5x", early, late)
	}
	if got := len(a.tasks); got > 50 {
		t.Fatalf("the plan holds %d tasks, want at most 50", got)
	}
	if got := cap(a.msgs); got > 4*8 {
		t.Fatalf("the generator holds %d message slots for a window of 8", got)
	}
}

// TestAppendUnwindowedPinned pins the unwindowed workload's bytes: the
// benchmark's figures for it are compared across runs and versions, so
// windowing the plan must leave it byte for byte as it was.
func TestAppendUnwindowedPinned(t *testing.T) {
	sum := appendDigest(AppendOptions{Seed: 1}, 300)
	if got, want := hex.EncodeToString(sum[:]), "9bc3e0a40e0e94a3de30765cb08254e2d8855c2d78ef547cc6af5bdf35ed3b6e"; got != want {
		t.Fatalf("300 unwindowed steps hash to %s, want %s", got, want)
	}
}
