package cairn_test

import (
	"context"
	"errors"
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

// TestVerifyObeysMaxDepth: verify walked trees to the default depth
// whatever the workspace's MaxDepth said (docs/limits.md lists verify
// under it), so a state show refuses passed verify without a word.
func TestVerifyObeysMaxDepth(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	doc := `{"x":"` + strings.Repeat("y", 2000) + `"}`
	for range 6 {
		doc = `{"k":` + doc + `,"pad":"` + strings.Repeat("p", 1500) + `"}`
	}
	s, _ := w.Session("deep")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(doc)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	ws, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := ws.SetLimits(cairn.Limits{MaxDepth: 2}); err != nil {
		t.Fatal(err)
	}
	sd, _ := ws.Session("deep")
	head, err := sd.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := head.JSON(ctx); !errors.Is(err, cairn.ErrLimit) {
		t.Fatalf("reading the state under MaxDepth 2: %v, want a limit error", err)
	}
	rep, err := ws.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 || !errors.Is(rep.Problems[0].Err, cairn.ErrLimit) ||
		!strings.Contains(rep.Problems[0].Effect, "may be intact") || !strings.Contains(rep.Problems[0].Effect, "MaxDepth") {
		t.Fatalf("verify under MaxDepth 2: %+v, want one limit problem naming MaxDepth", rep.Problems)
	}
}
