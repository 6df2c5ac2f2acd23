package mcpserver

import (
	"strings"
	"testing"
)

// TestParamTypesInTheirWords: a request whose params hold a member of
// the wrong JSON type ("_meta":5 on any request, "level":5 on
// logging/setLevel, "clientInfo":5 on initialize) was refused in the
// SDK's words, naming Go types ("into Go struct field
// mcp.ListToolsParams._meta of type map[string]interface {}"), and an
// initialize so refused got -32600. Each is -32602 naming the member and
// the type it wants, with the request's id, and the session goes on.
func TestParamTypesInTheirWords(t *testing.T) {
	s := startStdio(t)
	for _, tc := range []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":5}}`, "invalid params: _meta: want a JSON object, not 5"},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"log","arguments":{"ref":"a"},"_meta":"x"}}`, `invalid params: _meta: want a JSON object, not "x"`},
		{`{"jsonrpc":"2.0","id":3,"method":"ping","params":{"_meta":[]}}`, "invalid params: _meta: want a JSON object, not []"},
		{`{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":5}}`, "invalid params: level: want a string, not 5"},
		{`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":5}}`, "invalid params: uri: want a string, not 5"},
		{`{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":5}}`, "invalid params: clientInfo: want a JSON object, not 5"},
		{`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":5}}}`, "invalid params: clientInfo.name: want a string, not 5"},
	} {
		s.send(tc.line)
		r := s.next()
		if r.Error == nil || r.Error.Code != -32602 || r.Error.Message != tc.want || string(r.ID) == "null" {
			t.Errorf("%s: answered %s, want -32602 %q with its id", tc.line, strings.TrimSpace(r.raw), tc.want)
		}
	}
	s.send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"log","arguments":{"ref":"a"},"_meta":{"progressToken":"p"}}}`)
	if r := s.next(); string(r.ID) != "8" || r.Error != nil {
		t.Errorf("a call with a well-formed _meta after them: %s", strings.TrimSpace(r.raw))
	}
}

// TestResponseWithoutID: a response with no id was refused as "the
// answer to id : want ...", naming an empty id. It says the id is
// missing.
func TestResponseWithoutID(t *testing.T) {
	s := startStdio(t)
	s.send(`{"jsonrpc":"2.0","result":{}}`)
	want := `invalid response: a "result" or an "error" without an "id": want the id of the request it answers`
	if r := s.next(); r.Error == nil || r.Error.Code != -32600 || r.Error.Message != want {
		t.Errorf("a response without an id: answered %s, want -32600 %q", strings.TrimSpace(r.raw), want)
	}
	s.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if r := s.next(); string(r.ID) != "1" || r.Error != nil {
		t.Errorf("ping after it: %s", strings.TrimSpace(r.raw))
	}
}
