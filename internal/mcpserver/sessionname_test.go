package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestSessionNameRuleFromGoAPI: the MCP server said what a session name
// may hold in its own copies of the rule's words, free to drift from the
// Go API's. Every refusal of a name now says the Go API's rule, word for
// word.
func TestSessionNameRuleFromGoAPI(t *testing.T) {
	_, rule, ok := strings.Cut(cairn.ValidSession(".x").Error(), "want ")
	if !ok {
		t.Fatal("ValidSession says no rule")
	}
	ws := cairn.OpenStore(mem.New())
	cs := connect(t, ws)
	call(t, cs, ToolCheckpoint, json.RawMessage(`{"session":"a","state_json":"{\"x\":1}"}`), nil, false)
	for _, tc := range []struct{ tool, args, want string }{
		{ToolResume, `{"session":"../x"}`, `session "../x": want a session name, ` + rule},
		{ToolFork, `{"from":"a","to":".b"}`, `to ".b": want a session name, ` + rule},
		{ToolFork, `{"from":"a@0","to":"b"}`, `from "a@0": want SESSION or SESSION@N with N >= 1, a session name being ` + rule},
		{ToolCheckpoint, `{"session":".a","state_json":"{}"}`, `session ".a": want ` + rule},
	} {
		if msg := call(t, cs, tc.tool, json.RawMessage(tc.args), nil, true); !strings.Contains(msg, tc.want) {
			t.Errorf("%s %s: error %q, want %q", tc.tool, tc.args, msg, tc.want)
		}
	}
	// The checkpoint tool's schema says the same rule.
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name != ToolCheckpoint {
			continue
		}
		b, _ := json.Marshal(tool.InputSchema)
		var sch struct {
			Properties map[string]struct{ Description string } `json:"properties"`
		}
		if err := json.Unmarshal(b, &sch); err != nil || !strings.HasSuffix(sch.Properties["session"].Description, rule) {
			t.Errorf("checkpoint's session is described %q, want the rule %q", sch.Properties["session"].Description, rule)
		}
	}
}
