package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestResumeRemovedSession: resume of a session that was removed (cairn
// rm) says so (removed, with new: no step to go on from), as show and log
// say it was removed; a name that never had steps is new and not
// removed. A checkpoint then starts a new session under the name, which
// resume goes on from. Before, resume answered a removed session as one
// that never existed: new, and nothing more.
func TestResumeRemovedSession(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	cs := connect(t, ws)
	call(t, cs, ToolCheckpoint, map[string]any{"session": "r", "state_json": `{"n":1}`}, nil, false)
	call(t, cs, ToolCheckpoint, map[string]any{"session": "r", "state_json": `{"n":2}`}, nil, false)
	if _, err := ws.Remove(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	call(t, cs, ToolResume, map[string]any{"session": "r"}, &out, false)
	if out["new"] != true || out["removed"] != true || out["step"] != nil {
		t.Errorf("resume of a removed session = %v; want new and removed, no step", out)
	}
	for _, tool := range []string{ToolShow, ToolLog} {
		if text := call(t, cs, tool, map[string]any{"ref": "r"}, nil, true); !strings.Contains(text, "removed") {
			t.Errorf("%s of a removed session: %q; want it to say it was removed", tool, text)
		}
	}
	out = nil
	call(t, cs, ToolResume, map[string]any{"session": "never"}, &out, false)
	if out["new"] != true || out["removed"] != nil {
		t.Errorf("resume of a name with no steps = %v; want new, not removed", out)
	}
	call(t, cs, ToolCheckpoint, map[string]any{"session": "r", "state_json": `{"again":1}`}, nil, false)
	out = nil
	call(t, cs, ToolResume, map[string]any{"session": "r"}, &out, false)
	if out["new"] != false || out["removed"] != nil || out["state_json"] != `{"again":1}` {
		t.Errorf("resume after a checkpoint to the removed name = %v; want the new session's head", out)
	}
}
