package cairn_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestRecordKeysMatchedExactly: a record key that is one of the
// convention's in other letters ("Role", "messAges", "tYpe", a Kelvin
// sign for a k) is refused with the path and the key it stands for.
// encoding/json matches keys ignoring case, so such a record was read as
// following the convention, and the exports copied its tools, keys as
// given, into lines OpenAI's reader refuses ({"tYpe":"function",…}: found
// by FuzzRecordExport).
func TestRecordKeysMatchedExactly(t *testing.T) {
	for _, c := range []struct{ rec, want string }{
		{`{"messAges":[{"role":"user","content":"hi"}],"tools":[]}`, `step record: key "messAges" is the convention's "messages" in other letters`},
		{`{"messages":[{"Role":"user","content":"hi"}]}`, `step record: messages[0]: key "Role" is the convention's "role"`},
		{`{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c","Function":{"name":"f","arguments":{}}}]}]}`, `step record: messages[0].tool_calls[0]: key "Function" is the convention's "function"`},
		{`{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c","function":{"NAME":"f"}}]}]}`, `step record: messages[0].tool_calls[0].function: key "NAME" is the convention's "name"`},
		{`{"tools":[{"tYpe":"function","function":{"name":"f"}}]}`, `step record: tools[0]: key "tYpe" is the convention's "type"`},
		{`{"tools":[{"type":"function","function":{"nAme":"f","name":"f"}}]}`, `step record: tools[0].function: key "nAme" is the convention's "name"`},
		{`{"model":"m","toKens":{"prompt":1,"completion":2}}`, `step record: key "toKens" is the convention's "tokens"`},
		{`{"model":"m","tokens":{"prompt":1,"completion":2,"cached":0,"PROMPT":3}}`, `step record: tokens: key "PROMPT" is the convention's "prompt"`},
		{"{\"model\":\"m\",\"agent\":{\"name\":\"a\",\"\\u0056ersion\":\"1\"}}", `step record: agent: key "Version" is the convention's "version"`},
		{"{\"model\":\"m\",\"to\\u212Aens\":{\"prompt\":1}}", "step record: key \"to\u212aens\" is the convention's \"tokens\""},
	} {
		_, err := cairn.ParseRecord([]byte(c.rec))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || errors.Is(err, cairn.ErrNotConventional) {
			t.Errorf("ParseRecord(%s) = %v; want %q…", c.rec, err, c.want)
		}
	}
	// Keys outside the convention, in any letters, are the record's own:
	// labels' keys, a tool's arguments and parameters, anything else.
	for _, rec := range []string{
		`{"model":"m","Model2":"x","labels":{"Model":"a","MODEL":"b"}}`,
		`{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c","name":"f","arguments":{"Name":1,"ID":2}}]}]}`,
		`{"tools":[{"type":"function","function":{"name":"f","Description":"d","parameters":{"type":"object","Properties":{}}}}]}`,
		`{"Messages":[{"role":"user","content":"hi"}]}`, // no key of the convention's: a raw record, as before
	} {
		if _, err := cairn.ParseRecord([]byte(rec)); err != nil && !errors.Is(err, cairn.ErrNotConventional) {
			t.Errorf("ParseRecord(%s) = %v; want it read", rec, err)
		}
	}
}
