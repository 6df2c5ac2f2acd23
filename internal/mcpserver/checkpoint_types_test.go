package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestCheckpointWrongTypeSaysTheValue: checkpoint, which reads its
// arguments itself, said an argument of the wrong type in encoding/json's
// words for the type ("expect: want a step number, 0 or more, not bool",
// "status: ... not number", "session: ... not string"), where every other
// tool says the value it was given ("limit: want an integer ..., not
// \"5\""). It says the value now, and writes nothing.
func TestCheckpointWrongTypeSaysTheValue(t *testing.T) {
	ws := cairn.OpenStore(mem.New())
	cs := connect(t, ws)
	for _, tc := range []struct{ args, want string }{
		{`{"session":"s","state_json":"{}","expect":true}`, "expect: want a step number, 0 or more, not true"},
		{`{"session":"s","state_json":"{}","expect":"3"}`, `expect: want a step number, 0 or more, not "3"`},
		{`{"session":"s","state_json":"{}","expect":1.5}`, "expect: want a step number, 0 or more, not 1.5"},
		{`{"session":"s","state_json":"{}","status":5}`, "status: want running, awaiting_input or done, not 5"},
		{`{"session":"s","state_json":{"a":1}}`, `state_json: want the state as JSON text, a string, not {"a":1}`},
		{`{"session":["s"],"state_json":"{}"}`, `session: want a session name, not ["s"]`},
		{`{"session":"s","state_json":"{}","idempotency_key":7}`, "idempotency_key: want a key of 1-128 printable ASCII characters, no spaces, a string, not 7"},
	} {
		text := call(t, cs, ToolCheckpoint, json.RawMessage(tc.args), nil, true)
		if !strings.Contains(text, tc.want) {
			t.Errorf("checkpoint %s: %q, want %q", tc.args, text, tc.want)
		}
		for _, word := range []string{"not bool", "not number", "not string", "not array", "not object"} {
			if strings.Contains(text, word) {
				t.Errorf("checkpoint %s: %q names a type, not the value", tc.args, text)
			}
		}
	}
	var rs ResumeOut
	if call(t, cs, ToolResume, map[string]any{"session": "s"}, &rs, false); !rs.New {
		t.Errorf("a refused checkpoint wrote a step: %+v", rs)
	}
}
