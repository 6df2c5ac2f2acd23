package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestVerifyOlderBaseMarkerLost: every prune or removal writes the older,
// overwritten base marker before its own, and ReadBase reads the others
// only when that one is there. With it deleted, readers disagreed about
// the session (a prune read as undone by show and log; a removal read as
// removed by sessions and log, while gc kept every step live) and
// verify said "0 problems". It now names the missing marker.
func TestVerifyOlderBaseMarkerLost(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	commitSmall(t, ws, "p", 5)
	if _, err := ws.Prune(ctx, "p", 2); err != nil {
		t.Fatal(err)
	}
	if rep, err := ws.Verify(ctx); err != nil || len(rep.Problems) != 0 {
		t.Fatalf("verify before: %v %v", rep, err)
	}
	if err := store.Delete(ctx, manifest.BaseKey("p")); err != nil {
		t.Fatal(err)
	}
	rep, err := cairn.OpenStore(store).Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range rep.Problems {
		if p.Object == manifest.BaseKey("p") {
			found = true
			if !errors.Is(p.Err, cairn.ErrCorrupt) || strings.Contains(p.Err.Error(), "steps/") || !strings.Contains(p.Err.Error(), "session p") {
				t.Errorf("problem: %v; want ErrCorrupt naming session p in words", p.Err)
			}
		}
	}
	if !found {
		t.Errorf("verify problems = %v; want the missing base marker of p reported", rep.Problems)
	}
}
