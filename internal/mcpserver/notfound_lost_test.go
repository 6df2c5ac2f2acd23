package mcpserver

import (
	"context"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestLostStepSaidOnce: a tool reading a step the store has lost says
// what is missing and why once, as the command line and the HTTP API
// do, with "not found" once; it said "step d@2: not found: the store has lost it (…)".
func TestLostStepSaidOnce(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	s, _ := cairn.OpenStore(store).Session("d")
	for range 3 {
		if _, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Delete(ctx, manifest.StepKey("d", 2)); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, cairn.OpenStore(store))
	const want = "step d@2 not found: the store has lost it (cairn verify lists what is missing)"
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{ToolShow, map[string]any{"ref": "d@2"}},
		{ToolResume, map[string]any{"session": "d", "step": 2}},
	} {
		if msg := call(t, cs, c.tool, c.args, nil, true); msg != want {
			t.Errorf("%s %v: %q; want %q", c.tool, c.args, msg, want)
		}
	}
}
