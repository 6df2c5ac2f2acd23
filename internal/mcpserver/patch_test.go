package mcpserver

import (
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestCheckpointPatch: checkpoint with a patch changes the last
// checkpoint's state; a failing patch names the operation and commits
// nothing; state_json and patch together are refused.
func TestCheckpointPatch(t *testing.T) {
	ws := cairn.OpenStore(mem.New())
	cs := connect(t, ws)
	var st StepInfo
	call(t, cs, ToolCheckpoint, map[string]any{"session": "p", "state_json": `{"messages":["a"]}`}, &st, false)
	call(t, cs, ToolCheckpoint, map[string]any{"session": "p", "patch": `[{"op":"add","path":"/messages/-","value":"b"}]`, "expect": 1}, &st, false)
	if st.Step != 2 {
		t.Fatalf("patch checkpoint = %+v", st)
	}
	msg := call(t, cs, ToolCheckpoint, map[string]any{"session": "p", "patch": `[{"op":"remove","path":"/messages/7"}]`}, nil, true)
	if !strings.Contains(msg, "patch op 1 (remove /messages/7): no element 7 (the array has 2)") {
		t.Fatalf("failed patch error = %q", msg)
	}
	call(t, cs, ToolCheckpoint, map[string]any{"session": "p", "state_json": `{}`, "patch": `[]`}, nil, true)
	call(t, cs, ToolCheckpoint, map[string]any{"session": "p"}, nil, true)
	// A patch sent as an array, not text, is taken as sent.
	call(t, cs, ToolCheckpoint, map[string]any{"session": "p", "patch": []any{map[string]any{"op": "add", "path": "/n", "value": 1}}}, &st, false)
	for _, bad := range []any{map[string]any{"op": "add"}, 5, "not json", "[5]"} {
		msg := call(t, cs, ToolCheckpoint, map[string]any{"session": "p", "patch": bad}, nil, true)
		if !strings.Contains(msg, "patch") || strings.Contains(msg, "Go ") || strings.Contains(msg, "RawMessage") {
			t.Errorf("patch %v: error %q, want one about the patch in the tool's words", bad, msg)
		}
	}
	var r ResumeOut
	call(t, cs, ToolResume, map[string]any{"session": "p"}, &r, false)
	if r.Step != 3 || r.StateJSON != `{"messages":["a","b"],"n":1}` {
		t.Fatalf("resume after patches = %+v", r)
	}
}
