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
		{ToolFork, `{"from":"a@0","to":"b"}`, `from: bad step reference "a@0": steps are numbered from 1`},
		{ToolFork, `{"from":"a b@1","to":"b"}`, `from "a b": want a session name, ` + rule},
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

// TestLongValuesClipped: a session name, an idempotency key, a status or
// an argument's name far past what any may be was echoed whole in its
// error: a 100 KB value, a 100 KB error, read into the agent's context.
// Each is shown by its first 32 characters and its length now, as the
// HTTP API shows a long name.
func TestLongValuesClipped(t *testing.T) {
	ws := cairn.OpenStore(mem.New())
	cs := connect(t, ws)
	long := strings.Repeat("a", 100_000)
	shown := `"` + strings.Repeat("a", 32) + `…" (100000 characters)`
	for _, tc := range []struct{ tool, args, want string }{
		{ToolResume, `{"session":"` + long + `"}`, `session ` + shown + `: want a session name`},
		{ToolCheckpoint, `{"session":"` + long + `","state_json":"{}"}`, `session ` + shown + `: want`},
		{ToolCheckpoint, `{"session":"s","state_json":"{}","idempotency_key":"` + long + `"}`, `idempotency_key ` + shown + `: want`},
		{ToolCheckpoint, `{"session":"s","state_json":"{}","status":"` + long + `"}`, `status ` + shown + `: want`},
		{ToolCheckpoint, `{"session":"s","state_json":"{}","` + long + `":1}`, `unknown argument ` + shown},
		{ToolLog, `{"ref":"` + long + `"}`, `ref ` + shown + `: want a session name`},
		{ToolLog, `{"ref":"s@` + long + `"}`, `ref: bad step reference "s@aaaa`},
		{ToolFork, `{"from":"s","to":"` + long + `"}`, `to ` + shown + `: want a session name`},
	} {
		msg := call(t, cs, tc.tool, json.RawMessage(tc.args), nil, true)
		if !strings.Contains(msg, tc.want) || len(msg) > 400 {
			t.Errorf("%s with a 100,000-character value: error %.300q (%d bytes), want %q", tc.tool, msg, len(msg), tc.want)
		}
	}
}
