package mcpserver

import (
	"strings"
	"testing"
)

// TestListCursorSaysWhy: tools/list with a cursor the server never gave
// was answered -32602 "invalid params" and nothing more, so a client
// could not tell its cursor from any other parameter. MCP answers an
// unknown cursor -32602; the message says now why: this server lists
// every tool in one page and gives no cursor. An empty or null cursor is
// no cursor, and lists the tools (null was refused as "want a string").
func TestListCursorSaysWhy(t *testing.T) {
	s := startStdio(t)
	for _, tc := range []struct{ params, want string }{
		{`{"cursor":"abc"}`, `the cursor "abc" is not one it gave`},
		{`{"cursor":"In8DAQEJcGFnZVRva2VuAf-AAAEBAQdMYXN0VUlEAQwAAAAJ_4ABBGRpZmYA"}`, "is not one it gave"}, // the SDK would take it: the tools after diff
		{`{"cursor":7}`, "cursor: want a string"},
	} {
		s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":` + tc.params + `}`)
		r := s.next()
		if string(r.ID) != "1" {
			t.Errorf("tools/list with %s: answered with id %s, not the request's 1: %s", tc.params, r.ID, r.raw)
		}
		if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, tc.want) ||
			!strings.Contains(r.Error.Message, "one page") || strings.Contains(r.Error.Message, "Go") {
			t.Errorf("tools/list with %s: %s; want -32602 saying %q and that every tool is listed in one page", tc.params, r.raw, tc.want)
		}
	}
	// An empty or null cursor is none (clients that serialise an unset
	// field send null): the tools are listed.
	for _, c := range []string{`""`, `null`} {
		s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":` + c + `}}`)
		if r := s.next(); r.Error != nil || !strings.Contains(string(r.Result), `"checkpoint"`) {
			t.Errorf("tools/list with the cursor %s: %s; want the tools", c, r.raw)
		}
	}
}
