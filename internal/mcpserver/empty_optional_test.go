package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestCheckpointEmptyOptionalStrings: checkpoint took "" for state_json
// and idempotency_key as not given (LLM clients send "" for an optional
// field they do not use), but refused "" for record ("a string that is
// not JSON text") and for patch ("want a JSON array"): a client that
// filled every field it did not use with "" could send its state only
// with the patch left "" , not its patch with state_json left "", and no
// checkpoint without a record. Both are taken as not given now.
func TestCheckpointEmptyOptionalStrings(t *testing.T) {
	ws := cairn.OpenStore(mem.New())
	cs := connect(t, ws)
	for i, args := range []string{
		`{"session":"s","state_json":"{\"n\":1}","patch":"","record":"","idempotency_key":""}`,
		`{"session":"s","state_json":"","patch":"[{\"op\":\"replace\",\"path\":\"/n\",\"value\":2}]","record":""}`,
	} {
		if text := call(t, cs, ToolCheckpoint, json.RawMessage(args), nil, false); !strings.Contains(text, `"step":`+string(rune('1'+i))) {
			t.Errorf("checkpoint %s: %s; want step %d", args, text, i+1)
		}
	}
	var rs ResumeOut
	call(t, cs, ToolResume, map[string]any{"session": "s"}, &rs, false)
	if rs.StateJSON != `{"n":2}` || rs.Record != nil {
		t.Errorf("resume: %s with record %s; want {\"n\":2} and no record", rs.StateJSON, rs.Record)
	}
}
