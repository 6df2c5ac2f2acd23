package cairn_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestVerifyLimitIsNoDamage: a step object above the workspace's
// MaxObjectBytes is a problem verify cannot check past, not damage. Its
// Effect told a Go program to restore the object from a backup; it now
// says the object may be intact and which limit to raise.
func TestVerifyLimitIsNoDamage(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := w.Session("a")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"messages":["`+strings.Repeat("x", 4096)+`"]}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// A fresh workspace, limits set before use.
	ws, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := ws.SetLimits(cairn.Limits{MaxObjectBytes: 64}); err != nil {
		t.Fatal(err)
	}
	rep, err := ws.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) == 0 {
		t.Fatal("verify found no problem reading past the limit")
	}
	for _, p := range rep.Problems {
		if strings.Contains(p.Effect, "backup") || !strings.Contains(p.Effect, "may be intact") || !strings.Contains(p.Effect, "Limits.MaxObjectBytes") {
			t.Errorf("problem %v: effect %q, want that it may be intact and which limit to raise", p, p.Effect)
		}
	}
}
