package mcpserver

import (
	"strings"
	"testing"
)

// TestTrailingWhitespaceLine: a message followed by spaces or tabs on
// its line (JSON allows whitespace after a value) ended the session:
// the SDK's decoder read "invalid trailing data at the end of stream",
// `cairn mcp` exited 1 saying so, and no call after it was answered. Such
// a line is the message it holds: answered, and the session goes on.
func TestTrailingWhitespaceLine(t *testing.T) {
	s := startStdio(t)
	s.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}   `)
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"checkpoint","arguments":{"session":"a","state_json":"{}"}}}` + " \t ")
	s.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	got := map[string]reply{}
	for range 3 {
		r := s.next()
		got[string(r.ID)] = r
	}
	for _, id := range []string{"1", "2", "3"} {
		if r, ok := got[id]; !ok || r.Error != nil || strings.Contains(r.raw, `"isError":true`) {
			t.Errorf("id %s: answered %q, want a result", id, strings.TrimSpace(r.raw))
		}
	}
}
