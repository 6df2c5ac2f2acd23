package cairn_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestRecordHugeNumbers: what is valid JSON but not I-JSON (RFC 7493),
// which trainers' JSON readers refuse or read otherwise — a number no
// IEEE double holds (1e400), a lone half of a UTF-16 surrogate pair
// (\ud800), an object with a member name twice — in the parts of a
// record the exports copy as given (a tool definition, a tool call's
// arguments, as an object or as the JSON text of a string) does not
// follow the convention, and ParseRecord says where; cairn commit
// notes it.
func TestRecordHugeNumbers(t *testing.T) {
	call := func(args string) string {
		return `{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c","name":"f","arguments":` + args + `}]}]}`
	}
	tool := func(n string) string {
		return `{"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":{"maximum":` + n + `}}}}}]}`
	}
	const big, lone = "too large for a double", "half of a UTF-16 surrogate pair"
	for _, c := range []struct{ rec, where, why string }{
		{tool("1e400"), "tools[0]", big},
		{tool("-1E+309"), "tools[0]", big},
		{call(`{"x":[1,{"y":1.8e308}]}`), "messages[0].tool_calls[0]: arguments", big},
		{call(`"{\"x\":-1e400}"`), "messages[0].tool_calls[0]: arguments", big},
		{`{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"x\":1e400}"}}]}]}`, "messages[0].tool_calls[0]: arguments", big},
		// A \u escape that is half a surrogate pair: no Unicode text.
		{tool(`"\ud800"`), "tools[0]", lone},
		{call(`{"x":"a\udc00"}`), "messages[0].tool_calls[0]: arguments", lone},
		{call(`"\ud800"`), "messages[0].tool_calls[0]: arguments", lone},
		{call(`"{\"x\":\"\\ud800\"}"`), "messages[0].tool_calls[0]: arguments", lone},
		// A member name twice in one object: readers keep either.
		{tool(`{"a":1,"b":{"c":1,"c":2}}`), "tools[0]", `"c" twice`},
		{call(`{"x":1,"x":2}`), "messages[0].tool_calls[0]: arguments", `"x" twice`},
		{call(`"{\"x\":1,\"x\":2}"`), "messages[0].tool_calls[0]: arguments", `"x" twice`},
	} {
		_, err := cairn.ParseRecord([]byte(c.rec))
		if err == nil || errors.Is(err, cairn.ErrNotConventional) || !strings.Contains(err.Error(), c.where) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: %v, want it refused at %s: %s", c.rec, err, c.where, c.why)
		}
	}
	// Kept: what a double holds or rounds to zero, a number in text
	// that is not JSON or in a string, a surrogate pair whole, and a
	// lone half in a message's text (read as U+FFFD, as every string), one
	// name in two objects.
	for _, r := range []string{tool("1e-400"), tool("1.7976931348623157e308"), call(`"x is 1e400"`), call(`{"s":"1e400"}`),
		call(`{"x":"\ud83d\ude00"}`), call(`{"x":{"y":1},"z":{"y":2}}`), `{"messages":[{"role":"user","content":"\ud800"}]}`} {
		if _, err := cairn.ParseRecord([]byte(r)); err != nil {
			t.Errorf("%s: %v", r, err)
		}
	}
}
