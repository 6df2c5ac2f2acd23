package cairn

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas/mem"
)

// TestVerifySeesABlobOutsideTheLayout: a step whose state names a blob
// that no object of its layout holds cannot be read ("blob … is not in
// any object of the step's layout"), yet verify reported the store clean
// as long as another step's layout, checked earlier in the run, held the
// blob: it re-hashes each blob once per run and skipped it for every
// later step. Verify checks what a reader checks (I6): a blob checked
// already must still be in the layout of each step that names it. The
// step is made here as a StateOf commit once could (its head check
// fooled), states of another session's step.
func TestVerifySeesABlobOutsideTheLayout(t *testing.T) {
	ctx := context.Background()
	ws := OpenStore(mem.New())
	a, _ := ws.Session("a")
	b, _ := ws.Session("b")
	other, err := a.Commit(ctx, JSON([]byte(`{"only-in-a":"`+strings.Repeat("q", 100000)+`"}`)), CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	head, err := b.Commit(ctx, JSON([]byte(`{"b":1}`)), CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := *other.m
	m.ID = head.m.ID
	forged := *other
	forged.m = &m
	forged.ID = head.ID
	bad, err := b.Commit(ctx, StateOf(&forged), CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.JSON(ctx); err == nil {
		t.Fatalf("%s reads back: the test made no damage", bad)
	}
	rep, err := ws.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range rep.Problems {
		if strings.Contains(p.String(), bad.String()) {
			found = true
		}
	}
	if !found {
		t.Errorf("verify: problems %v; want one for %s, which cannot be read", rep.Problems, bad)
	}
}
