package mcpserver

import (
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestCheckpointIdempotencyKey: an agent that calls checkpoint again with
// the same idempotency_key (its first call's answer lost) gets the step
// the first call wrote, marked replayed, and the session holds it once;
// the key on another step, or a key no step could hold, is an error in
// words.
func TestCheckpointIdempotencyKey(t *testing.T) {
	cs := connect(t, cairn.OpenStore(mem.New()))
	args := map[string]any{"session": "a", "state_json": `{"n":1}`, "expect": 0, "idempotency_key": "agent-7/turn-1"}
	var first, again CheckpointOut
	call(t, cs, ToolCheckpoint, args, &first, false)
	call(t, cs, ToolCheckpoint, args, &again, false)
	if first.Replayed || !again.Replayed || again.Step != 1 || again.ID != first.ID {
		t.Fatalf("first %+v, again %+v; want step 1 once, the second replayed", first, again)
	}
	var r ResumeOut
	call(t, cs, ToolResume, map[string]any{"session": "a"}, &r, false)
	if r.Step != 1 {
		t.Errorf("the session's head is step %d, want 1", r.Step)
	}
	msg := call(t, cs, ToolCheckpoint, map[string]any{"session": "a", "state_json": `{"n":2}`, "idempotency_key": "agent-7/turn-1"}, nil, true)
	if !strings.Contains(msg, `idempotency key "agent-7/turn-1" was already used for step 1`) {
		t.Errorf("key used for another step: %q", msg)
	}
	msg = call(t, cs, ToolCheckpoint, map[string]any{"session": "a", "state_json": `{}`, "idempotency_key": "two words"}, nil, true)
	if !strings.Contains(msg, "idempotency_key") || !strings.Contains(msg, "printable ASCII") {
		t.Errorf("bad key: %q", msg)
	}
}
