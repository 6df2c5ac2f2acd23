package export_test

import (
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/export"
)

// TestOpenAIShapedToolCalls: an agent that records the assistant
// message as OpenAI's API returns it nests a call's name and arguments
// under "function". The record was refused as breaking the convention
// ("tool_calls[0]: no name"), and every chat export skipped the whole
// trajectory. The nested form is read as the convention's.
func TestOpenAIShapedToolCalls(t *testing.T) {
	ws := emptyStore(t)
	commitRecords(t, ws, "s", `{"messages":[{"role":"user","content":"q"},`+
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a\"}"}}]},`+
		`{"role":"tool","tool_call_id":"c1","content":"A"},{"role":"assistant","content":"done"}]}`)
	out, sum, _ := run(t, ws, export.Options{Format: export.OpenAIJSONL})
	if sum.Trajectories != 1 || !strings.Contains(out, `"function":{"name":"read","arguments":"{\"path\":\"a\"}"}`) {
		t.Errorf("openai-jsonl: skipped %+v: %s", sum.Skipped, out)
	}
	out, sum, _ = run(t, ws, export.Options{Format: export.ATIF})
	if len(sum.LeftOut) != 0 || !strings.Contains(out, `"function_name":"read","arguments":{"path":"a"}`) {
		t.Errorf("atif: left out %+v: %s", sum.LeftOut, out)
	}
}
