package cairn_test

import (
	"context"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestRaceStaleRemoveLowersBase (a defect a race hunt found, fixed since; kept as its regression test): remove A reads s's head 4 and is slow to
// put its tombstone s@5. Remove B fences s@5 (base 6); a writer commits
// s@6 and s@7; remove C fences s@8 (base 9). A resumes: s@5 holds a
// tombstone, so it takes it as its own fence and writes the base 6 over 9.
func TestRaceStaleRemoveLowersBase(t *testing.T) {
	ctx := context.Background()
	raw := mem.New()
	ws := cairn.OpenStore(raw)
	commitN(t, ws, "s", "s", 1, 4)
	p := newPause(raw)
	p.put = func(key string) bool { return key == manifest.StepKey("s", 5) }
	a := make(chan error, 1)
	go func() {
		_, err := cairn.OpenStore(p).Remove(ctx, "s")
		a <- err
	}()
	waitPaused(t, p, a)
	if _, err := cairn.OpenStore(raw).Remove(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	w := cairn.OpenStore(raw)
	commitN(t, w, "s", "w", 1, 2)
	res, err := cairn.OpenStore(raw).Remove(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("remove C: %+v", *res)
	close(p.release)
	t.Logf("remove A: %v", <-a)
	fresh := cairn.OpenStore(raw)
	if h, err := fresh.ReadHead(ctx, "s"); err == nil {
		t.Errorf("s reads %s after remove C; want removed", h)
	}
	t.Logf("log: %v", logOfLoose(fresh, "s"))
	if st, err := fresh.Resolve(ctx, "s@7"); err == nil {
		t.Errorf("s@7, removed by remove C, reads as %s", st)
	} else {
		t.Logf("s@7: %v", err)
	}
	st := commitN(t, fresh, "s", "x", 1, 1)
	t.Logf("commit after: %s parent %v", st, st.Parent)
	t.Logf("log: %v", logOfLoose(cairn.OpenStore(raw), "s"))
	mustVerify(t, cairn.OpenStore(raw))
}
