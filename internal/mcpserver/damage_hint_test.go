package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/castest"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestDamageErrorSaysWhatToDo: a tool that fails on the store's damage
// says what its user can do about it (run cairn verify), once, after
// what is damaged, as the CLI and the HTTP API do; a failure that is no
// damage gets no such words. The tools said only what was damaged.
func TestDamageErrorSaysWhatToDo(t *testing.T) {
	ctx := context.Background()
	const hint = "cairn verify names every damaged object"
	store := mem.New()
	s, _ := cairn.OpenStore(store).Session("d")
	for _, doc := range []string{`{"n":1}`, `{"n":2}`} {
		if _, err := s.Commit(ctx, cairn.JSON([]byte(doc)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	castest.Damage(t, store, manifest.StepKey("d", 2))
	cs := connect(t, cairn.OpenStore(store))
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{ToolResume, map[string]any{"session": "d"}},
		{ToolShow, map[string]any{"ref": "d@2"}},
		{ToolLog, map[string]any{"ref": "d@2"}},
		{ToolDiff, map[string]any{"a": "d@1", "b": "d@2"}},
		{ToolCheckpoint, map[string]any{"session": "d", "state_json": `{"n":3}`}},
		{ToolAsk, map[string]any{"session": "d", "question": "go on?"}},
	} {
		msg := call(t, cs, c.tool, c.args, nil, true)
		if !strings.Contains(msg, "session d, step 2") || strings.Count(msg, hint) != 1 {
			t.Errorf("%s %v: %q; want it to name d@2 and what to do, once", c.tool, c.args, msg)
		}
	}
	if msg := call(t, cs, ToolShow, map[string]any{"ref": "nosuch"}, nil, true); strings.Contains(msg, "cairn verify") {
		t.Errorf("show nosuch: %q; want no words about damage", msg)
	}
}
