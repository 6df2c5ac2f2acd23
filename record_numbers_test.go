package cairn_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestRecordHugeNumbers: a number no IEEE double holds (1e400) in the
// parts of a record the exports copy as given — a tool definition, a
// tool call's arguments, as an object or as the JSON text of a string —
// does not follow the convention (a trainer's JSON reader refuses it or
// reads infinity), and ParseRecord says where; cairn commit notes it.
// One a double rounds to zero, and any number in a string that is not
// JSON text, is kept.
func TestRecordHugeNumbers(t *testing.T) {
	call := func(args string) string {
		return `{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c","name":"f","arguments":` + args + `}]}]}`
	}
	tool := func(n string) string {
		return `{"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":{"maximum":` + n + `}}}}}]}`
	}
	for _, c := range []struct{ rec, where string }{
		{tool("1e400"), "tools[0]"},
		{tool("-1E+309"), "tools[0]"},
		{call(`{"x":[1,{"y":1.8e308}]}`), "messages[0].tool_calls[0]: arguments"},
		{call(`"{\"x\":-1e400}"`), "messages[0].tool_calls[0]: arguments"},
		{`{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"x\":1e400}"}}]}]}`, "messages[0].tool_calls[0]: arguments"},
	} {
		_, err := cairn.ParseRecord([]byte(c.rec))
		if err == nil || errors.Is(err, cairn.ErrNotConventional) || !strings.Contains(err.Error(), c.where) || !strings.Contains(err.Error(), "too large for a double") {
			t.Errorf("%s: %v, want it refused at %s", c.rec, err, c.where)
		}
	}
	for _, r := range []string{tool("1e-400"), tool("1.7976931348623157e308"), call(`"x is 1e400"`), call(`{"s":"1e400"}`)} {
		if _, err := cairn.ParseRecord([]byte(r)); err != nil {
			t.Errorf("%s: %v", r, err)
		}
	}
}
