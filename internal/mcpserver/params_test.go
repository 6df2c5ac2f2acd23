package mcpserver

import (
	"strings"
	"testing"
)

// TestParamsMemberTwiceRefused: a tools/call whose params give "name"
// (or "arguments") twice ran the tool named last, though the line's
// other members, and a tool's arguments, are refused when given twice:
// a reader that takes the first (a proxy that allows only read-only
// tools, a log) saw show while checkpoint ran. It is refused with the
// request's id, and nothing runs.
func TestParamsMemberTwiceRefused(t *testing.T) {
	s := startStdio(t)
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"show","arguments":{"session":"a","state_json":"{}"},"name":"checkpoint"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"checkpoint","arguments":{"ref":"a"},"arguments":{"session":"a","state_json":"{}"}}}`,
	} {
		s.send(line)
		r := s.next()
		if r.Error == nil || r.Error.Code != -32602 || string(r.ID) == "null" || !strings.Contains(r.Error.Message, "twice") {
			t.Errorf("%s: answered %s; want error -32602 with the id, saying a member is given twice", line, strings.TrimSpace(r.raw))
		}
	}
	if _, err := mustSession(t, s.ws, "a").Head(t.Context()); err == nil {
		t.Error("a line refused as invalid committed a step")
	}
}
