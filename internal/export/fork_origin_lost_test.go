package export_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/internal/export"
	"github.com/cairnlog/cairn/manifest"
)

// TestForkOriginLostSaidOnce: a preference export whose fork point's
// step the store has lost fails saying which step, why, and "not found"
// once. It said "read fork origin a@3: step a@3: not found": the step
// twice, and no reason.
func TestForkOriginLostSaidOnce(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	a, err := ws.Session("a")
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if _, err := a.Commit(ctx, cairn.JSON([]byte(`{"messages":[]}`)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	a3, err := a.Step(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Fork(ctx, a3, "b"); err != nil {
		t.Fatal(err)
	}
	if err := store.Delete(ctx, manifest.StepKey("a", 3)); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	_, err = export.Export(ctx, cairn.OpenStore(store), &out, export.Options{Format: "preference"})
	want := "read fork origin: step a@3 not found: the store has lost it (cairn verify lists what is missing)"
	if err == nil || err.Error() != want {
		t.Fatalf("export: %v; want %q", err, want)
	}
}
