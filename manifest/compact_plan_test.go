package manifest

import "testing"

// TestPlanBoundsLayout simulates the compaction policy over long
// sessions (every step adds blobs, every merge leaves something live)
// and checks that a layout never names more than fanout step objects
// plus fanout-1 packs per level, that packs stay in descending level
// order, and that each step's blobs are copied once per level.
func TestPlanBoundsLayout(t *testing.T) {
	for _, fanout := range []int{2, 4, 16, 32} {
		var l Layout
		maxObjects, merges := 0, 0
		steps := 100000
		for n := uint64(1); n <= uint64(steps); n++ {
			if nPacks, level, ok := plan(l, fanout); ok {
				merges++
				l.Packs = append(l.Packs[:len(l.Packs)-nPacks], PackRef{Session: "s", Number: n, Level: level})
				l.Steps = nil
			}
			l.Steps = append(l.Steps, Range{Session: "s", First: n, Last: n})
			objects := len(l.Packs) + len(l.Steps) // one range per step here
			if objects > maxObjects {
				maxObjects = objects
			}
			if n == 1000 || n == 10000 {
				t.Logf("fanout %d: at most %d objects in a layout up to step %d", fanout, maxObjects, n)
			}
			for i := 1; i < len(l.Packs); i++ {
				if l.Packs[i].Level > l.Packs[i-1].Level {
					t.Fatalf("fanout %d, step %d: packs out of level order: %v", fanout, n, l.Packs)
				}
			}
			levels := 0
			for f := 1; f <= int(n); f *= fanout {
				levels++
			}
			if bound := fanout + (fanout-1)*levels; objects > bound {
				t.Fatalf("fanout %d, step %d: layout names %d objects, bound %d", fanout, n, objects, bound)
			}
		}
		t.Logf("fanout %d, %d steps: at most %d objects in a layout, %d merges (%.4f extra PUTs a step), %d packs at the end",
			fanout, steps, maxObjects, merges, float64(merges)/float64(steps), len(l.Packs))
	}
}
