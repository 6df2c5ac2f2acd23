package cairn_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

func TestParseRecord(t *testing.T) {
	good := []string{
		`{"messages":[{"role":"user","content":"hi"}]}`,
		`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"1","name":"ls","arguments":{"p":"/"}}]},{"role":"tool","tool_call_id":"1","content":"x"}]}`,
		`{"labels":{"k":"v"},"other":[1,2]}`,
		// OpenAI's form: arguments as a JSON string, holding an object's
		// text or, from a model that erred, any text.
		`{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"1","name":"ls","arguments":"{\"p\":\"/\"}"}]}]}`,
		`{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"1","name":"ls","arguments":"not json"},{"id":"2","name":"ls","arguments":null},{"id":"3","name":"ls"}]}]}`,
		`{"tokens":{"prompt":1,"completion":2},"cost_usd":0.5,"latency_ms":3,"outcome":"success","reward":1}`,
	}
	for _, g := range good {
		if _, err := cairn.ParseRecord([]byte(g)); err != nil {
			t.Errorf("%s: %v", g, err)
		}
	}
	bad := map[string]string{
		`"text"`:            "not a JSON object",
		`[1]`:               "not a JSON object",
		`{"role":"user"}`:   "none of the convention's keys",
		`{"messages":"hi"}`: "messages: want an array of messages, got a string",
		`{"messages":[{"role":"bot","content":"x"}]}`:                                              `role "bot"`,
		`{"messages":[{"role":"user","tool_calls":[{"id":"1","name":"x"}]}]}`:                      "only assistant",
		`{"messages":[{"role":"assistant","tool_calls":[{"id":"1","name":""}]}]}`:                  "no name",
		`{"messages":[{"role":"assistant","tool_calls":[{"id":"1","name":"x","arguments":[1]}]}]}`: "not a JSON object or a string",
		`{"messages":[{"role":"assistant","tool_calls":[{"id":"1","name":"x","arguments":7}]}]}`:   "not a JSON object or a string",
		`{"tokens":{"prompt":"many"}}`:                                                             "tokens.prompt: want a whole number, got a string",
		`{"agent":{"version":"1"}}`:                                                                "agent has no name",
		`{"messages":[`:                                                                            "unexpected end",
	}
	for in, want := range bad {
		_, err := cairn.ParseRecord([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", in, err, want)
		}
		notTrying := in == `"text"` || in == `[1]` || in == `{"role":"user"}` || in == `{"messages":[`
		if got := errors.Is(err, cairn.ErrNotConventional); got != notTrying {
			t.Errorf("%s: errors.Is(err, ErrNotConventional) = %v, want %v", in, got, notTrying)
		}
	}
}

func TestMarshalRecordRoundTrip(t *testing.T) {
	cost := 0.25
	r := &cairn.Record{Messages: []cairn.Message{{Role: "user", Content: "q"}}, CostUSD: &cost, Labels: map[string]string{"a": "b"}}
	b, err := cairn.MarshalRecord(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cairn.ParseRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := json.Marshal(got)
	if string(g) != string(b) {
		t.Fatalf("round trip %s != %s", g, b)
	}
	if _, err := cairn.MarshalRecord(&cairn.Record{Messages: []cairn.Message{{Role: "x"}}}); err == nil {
		t.Fatal("MarshalRecord accepted a bad role")
	}
}

// TestRecordToolsInOpenAIForm: tool definitions follow the convention
// only in OpenAI's form, which every chat export writes them in and its
// readers take. `"tools":[{"type":"function"}]`, `[1]` or `[{}]` passed
// as following it, and openai-jsonl wrote them out verbatim, lines
// OpenAI's fine-tuning format refuses; such a record is now said not to
// follow the convention (commit notes it, chat exports skip it, naming
// why).
func TestRecordToolsInOpenAIForm(t *testing.T) {
	for _, tc := range []struct{ tools, want string }{
		{`[{"type":"function","function":{"name":"ls","parameters":{"type":"object"}}}]`, ""},
		{`[{"type":"function","function":{"name":"ls"}}]`, ""},
		{`[]`, ""},
		{`[1]`, "tools[0]: not a tool definition object"},
		{`[{}]`, `tools[0]: type is not "function"`},
		{`[{"type":"function"}]`, "tools[0]: the function has no name"},
		{`[{"type":"function","function":{"name":""}}]`, "tools[0]: the function has no name"},
		{`[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"b","parameters":[1]}}]`, "tools[1]: the function's parameters are not a JSON Schema object"},
	} {
		raw := []byte(`{"messages":[{"role":"user","content":"q"}],"tools":` + tc.tools + `}`)
		_, err := cairn.ParseRecord(raw)
		if tc.want == "" {
			if err != nil {
				t.Errorf("tools %s: %v; want it to follow the convention", tc.tools, err)
			}
			continue
		}
		if !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("tools %s: %v; want ErrInvalid saying %q", tc.tools, err, tc.want)
		}
	}
}
