package export_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cairnlog/cairn"
)

// shapes holds, one session each, the record shapes that stress the
// chat formats: OpenAI-style string arguments, parallel tool calls,
// assistant text beside calls, merged user turns, late system messages,
// a trailing user turn, a conversation opened by the assistant,
// reasoning (both spellings) and a tool list cleared, hostile unicode,
// and records outside or against the convention.
var shapes = map[string][]string{
	"args-string": {
		`{"messages":[{"role":"user","content":"read a"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","name":"read","arguments":"{\"path\": \"a\"}"}]}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"c1","content":"A"},{"role":"assistant","content":"","tool_calls":[{"id":"c2","name":"run","arguments":"ls -l"}]},{"role":"tool","tool_call_id":"c2","content":"total 0"},{"role":"assistant","content":"done"}]}`,
	},
	"parallel": {
		`{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"weather in Oslo and Rome?"}]}`,
		`{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"w1","name":"weather","arguments":{"city":"Oslo"}},{"id":"w2","name":"weather","arguments":{"city":"Rome"}}]},{"role":"tool","tool_call_id":"w1","content":"3C"},{"role":"tool","tool_call_id":"w2","content":"18C"}]}`,
		`{"messages":[{"role":"assistant","content":"Oslo 3C, Rome 18C."}]}`,
	},
	"text-beside-calls": {
		`{"messages":[{"role":"user","content":"fix it"},{"role":"assistant","content":"Let me look.","tool_calls":[{"id":"1","name":"read","arguments":{}}]},{"role":"tool","tool_call_id":"1","content":"x"},{"role":"assistant","content":"Fixed."}]}`,
	},
	"merged-turns": {
		`{"messages":[{"role":"user","content":"one"},{"role":"user","content":"two"},{"role":"assistant","content":"a"},{"role":"assistant","content":"b"},{"role":"system","content":"late rule"},{"role":"user","content":"three"},{"role":"assistant","content":"","tool_calls":[{"id":"1","name":"f","arguments":{}}]},{"role":"tool","tool_call_id":"1","content":"r"},{"role":"user","content":"and?"},{"role":"assistant","content":"c"}]}`,
	},
	"trailing-user": {
		`{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"},{"role":"user","content":"unanswered"}]}`,
	},
	"assistant-first": {
		`{"messages":[{"role":"assistant","content":"Hello, how can I help?"},{"role":"user","content":"hi"},{"role":"assistant","content":"ok"}]}`,
	},
	"raw-beside": {
		`{"messages":[{"role":"user","content":"q"}]}`, `{"foo":1}`, `{"messages":[{"role":"assistant","content":"a"}]}`,
	},
	"raw-only": {`"just text"`, `{"foo":1}`},
	"reasoning": {
		`{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","reasoning":"look first","tool_calls":[{"id":"r1","name":"read","arguments":{}}]},{"role":"tool","tool_call_id":"r1","content":"x"},{"role":"assistant","content":"a","reasoning_content":"x means a"}],"tools":[{"type":"function","function":{"name":"read","parameters":{"type":"object"}}}]}`,
		`{"messages":[{"role":"user","content":"and now?"},{"role":"assistant","content":"b"}],"tools":[]}`,
	},
	"unicode": {
		`{"messages":[{"role":"user","content":"h\u00e9 \ud83d\ude00 \u2028 \u0000 \ud800 \u202e"},{"role":"assistant","content":"<\/script> & \"q\" \u65e5\u672c"}]}`,
	},
	"broken": {
		`{"messages":[{"role":"user","content":"q"}]}`, `{"messages":[{"role":"bot","content":"lost?"}]}`, `{"messages":[{"role":"assistant","content":"a"}]}`,
	},
}

// fillShapes commits shapes to ws.
func fillShapes(t *testing.T, ws *cairn.Workspace) {
	t.Helper()
	ctx := context.Background()
	for name, recs := range shapes {
		s, err := ws.Session(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range recs {
			if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"i":1}`)), cairn.CommitOptions{Record: json.RawMessage(r)}); err != nil {
				t.Fatalf("%s step %d: %v", name, i+1, err)
			}
		}
	}
}
