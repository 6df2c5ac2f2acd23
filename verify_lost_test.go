package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/castest"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// corruptStep flips a byte in the middle of session@n's step object.
func corruptStep(t *testing.T, store cas.Store, session string, n uint64) {
	t.Helper()
	castest.Damage(t, store, manifest.StepKey(session, n))
}

// verifyFinds fails t unless rep has a problem with object key, step ref
// (or, for a problem no step's, session ref) and an error that is want (cas.ErrNotFound for a lost object: the
// API's ErrNotFound is for what does not exist) in words, no store key.
func verifyFinds(t *testing.T, rep *cairn.VerifyReport, key, ref string, want error) {
	t.Helper()
	for _, p := range rep.Problems {
		if p.Object == key && (p.Step == ref || p.Step == "" && p.Session == ref) {
			if !errors.Is(p.Err, want) || strings.Contains(p.Err.Error(), "steps/") {
				t.Errorf("verify: %s: %v; want %v in words", ref, p.Err, want)
			}
			return
		}
	}
	t.Errorf("verify problems = %v; want %s (%s) reported", rep.Problems, ref, key)
}

// TestVerifyLostStepBelowTheHead: a step lost below a session's head is
// reported (ErrNotFound, naming the session and step) and the steps
// below it are still checked, a corrupt one among them reported too,
// with no base marker or a damaged one. With a damaged marker the walk
// stopped at the lost step: neither it nor step 3 was reported, and only
// steps 6 to 10 were checked. In a fork, the gap in its own steps is
// reported and the walk goes on into the session it forked from.
func TestVerifyLostStepBelowTheHead(t *testing.T) {
	ctx := context.Background()
	for _, marker := range []string{"", "xyz", "99"} {
		t.Run(fmt.Sprintf("marker=%q", marker), func(t *testing.T) {
			store := mem.New()
			commitN(t, cairn.OpenStore(store), "d", "d", 1, 10)
			if marker != "" {
				if err := store.Put(ctx, manifest.BaseKey("d"), []byte(marker), cas.PutOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if err := store.Delete(ctx, manifest.StepKey("d", 5)); err != nil {
				t.Fatal(err)
			}
			corruptStep(t, store, "d", 3)
			for _, names := range [][]string{nil, {"d"}} {
				rep, err := cairn.OpenStore(store).Verify(ctx, names...)
				if err != nil {
					t.Fatalf("verify %v: %v", names, err)
				}
				verifyFinds(t, rep, manifest.StepKey("d", 5), "d@5", cas.ErrNotFound)
				verifyFinds(t, rep, manifest.StepKey("d", 3), "d@3", cairn.ErrCorrupt)
				if marker != "" {
					verifyFinds(t, rep, manifest.BaseKey("d"), "d", cairn.ErrCorrupt)
				}
				if rep.Steps != 8 { // 1, 2, 4 and 6 to 10
					t.Errorf("verify %v checked %d steps, want 8", names, rep.Steps)
				}
			}
		})
	}

	t.Run("fork", func(t *testing.T) {
		store := mem.New()
		ws := cairn.OpenStore(store)
		commitN(t, ws, "p", "p", 1, 4)
		s, _ := ws.Session("p")
		from, err := s.Step(ctx, 3)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ws.Fork(ctx, from, "f"); err != nil { // f@3, its parent p@2
			t.Fatal(err)
		}
		commitN(t, ws, "f", "f", 4, 10)
		if err := store.Put(ctx, manifest.BaseKey("f"), []byte("xyz"), cas.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := store.Delete(ctx, manifest.StepKey("f", 6)); err != nil {
			t.Fatal(err)
		}
		rep, err := cairn.OpenStore(store).Verify(ctx, "f")
		if err != nil {
			t.Fatal(err)
		}
		verifyFinds(t, rep, manifest.StepKey("f", 6), "f@6", cas.ErrNotFound)
		verifyFinds(t, rep, manifest.BaseKey("f"), "f", cairn.ErrCorrupt)
		if rep.Steps != 9 { // f@3 to f@5, f@7 to f@10, p@1 and p@2
			t.Errorf("verify f: %d steps, want 9", rep.Steps)
		}
		for _, p := range rep.Problems {
			if strings.HasPrefix(p.Step, "p@") || strings.HasPrefix(p.Object, "steps/p/") {
				t.Errorf("verify f: %v; want nothing of p reported", p)
			}
		}
	})

	// A fork keeps the steps its history reaches in the session it was
	// forked from when a prune drops them: with that session's marker
	// damaged, only a step lost above the fork's origin is known lost.
	t.Run("above a fork's origin", func(t *testing.T) {
		store := mem.New()
		ws := cairn.OpenStore(store)
		commitN(t, ws, "d", "d", 1, 30)
		s, _ := ws.Session("d")
		from, err := s.Step(ctx, 20)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ws.Fork(ctx, from, "f"); err != nil {
			t.Fatal(err)
		}
		if err := store.Put(ctx, manifest.BaseKey("d"), []byte("xyz"), cas.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := store.Delete(ctx, manifest.StepKey("d", 25)); err != nil {
			t.Fatal(err)
		}
		for _, names := range [][]string{nil, {"d"}} {
			rep, err := cairn.OpenStore(store).Verify(ctx, names...)
			if err != nil {
				t.Fatal(err)
			}
			verifyFinds(t, rep, manifest.StepKey("d", 25), "d@25", cas.ErrNotFound)
			want := 29 // d's steps but d@25
			if names == nil {
				want++ // and f@20
			}
			if rep.Steps != want {
				t.Errorf("verify %v checked %d steps, want %d", names, rep.Steps, want)
			}
		}
	})
}
