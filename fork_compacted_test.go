package cairn_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestForkOfCompactedStep: forks of W's compaction step and of steps
// whose blobs moved into that compaction's pack (held in W@33's step
// object) read back whole after W is pruned to its head, then removed,
// and gc has deleted everything the forks do not name.
func TestForkOfCompactedStep(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	commitN(t, ws, "W", "W", 1, 40)
	for _, n := range []int{20, 33, 34} {
		from, err := ws.Resolve(ctx, fmt.Sprintf("W@%d", n))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ws.Fork(ctx, from, fmt.Sprintf("F%d", n)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ws.Prune(ctx, "W", 1); err != nil {
		t.Fatal(err)
	}
	gcTwice(t, ws)
	if _, err := ws.Remove(ctx, "W"); err != nil {
		t.Fatal(err)
	}
	gcTwice(t, ws)
	fresh := cairn.OpenStore(store)
	for _, n := range []int{20, 33, 34} {
		name := fmt.Sprintf("F%d", n)
		checkState(t, fresh, name, gcState("W", n))
		if got := logOf(t, fresh, name); len(got) != n {
			t.Errorf("log of %s: %d steps; want %d", name, len(got), n)
		}
	}
	mustVerify(t, fresh)
}
