package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestCheckpointExpectRange: checkpoint's expect takes every step number
// the HTTP API's does (up to 2^64-1): one above 2^63-1 was refused as
// "want a step number, 0 or more, not 9223372036854775808", a number
// that is 0 or more. It is now compared with the head, a conflict as
// over HTTP; one past 2^64-1 says it is too large; nothing is written.
func TestCheckpointExpectRange(t *testing.T) {
	ws := cairn.OpenStore(mem.New())
	cs := connect(t, ws)
	for _, tc := range []struct{ expect, want string }{
		{"9223372036854775808", "expected head 9223372036854775808, but the session has no steps"},
		{"18446744073709551615", "expected head 18446744073709551615, but the session has no steps"},
		{"18446744073709551616", "expect: want a step number, 0 or more, not 18446744073709551616 (too large)"},
		{"-1", "expect: want a step number, 0 or more, not -1"},
	} {
		args := json.RawMessage(`{"session":"s","state_json":"{}","expect":` + tc.expect + `}`)
		if text := call(t, cs, ToolCheckpoint, args, nil, true); !strings.Contains(text, tc.want) {
			t.Errorf("expect %s: %q, want %q", tc.expect, text, tc.want)
		}
	}
	var rs ResumeOut
	if call(t, cs, ToolResume, map[string]any{"session": "s"}, &rs, false); !rs.New {
		t.Errorf("a refused checkpoint wrote a step: %+v", rs)
	}
}
