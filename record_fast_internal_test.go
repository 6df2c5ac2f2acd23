package cairn

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// recordSamples are records of every shape ParseRecord meets: following
// the convention, of the wrong shape, raw, not JSON.
var recordSamples = []string{
	`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"id":"a","name":"ls","arguments":{"x":1}},{"type":"function","function":{"name":"cat","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"ok"}],"model":"m","tokens":{"prompt":1,"completion":2,"cached":1},"cost_usd":0.1,"latency_ms":3,"labels":{"k":"v"},"outcome":"success","reward":1,"tools":[{"type":"function"}],"agent":{"name":"a","version":"1"}}`,
	`{"messages":[{"role":"assistant","content":"x","reasoning_content":"r"},{"role":"assistant","content":"y","reasoning":"a","reasoning_content":"b"}]}`,
	`{"messages":[{"role":"assistant","tool_calls":[{"name":"n","arguments":null,"function":{"name":"m","arguments":{"a":1}}}]}]}`,
	`{"messages":[null,{"role":"user","content":"x"}]}`,
	`{"messages":[{"role":"assistant","tool_calls":[null]}]}`,
	`{"messages":null,"outcome":"failure"}`,
	`{"Messages":[{"role":"user","content":"hi"}]}`,
	`{"MESSAGES":[{"role":"user","content":"hi"}],"outcome":"x"}`,
	`{"\u006dessages":[{"role":"user","content":"hi"}]}`,
	`{"messages":[{"Role":"user","CONTENT":"hi","Tool_Call_ID":"z"}]}`,
	`{"messages":[{"role":"user","content":"a","content":"b"}]}`,
	`{"messages":"no"}`,
	`{"messages":["no"]}`,
	`{"messages":[{"role":"user","content":5}]}`,
	`{"messages":[{"role":"robot","content":"?"}]}`,
	`{"messages":[{"role":"user","tool_calls":[{"name":"x"}]}]}`,
	`{"messages":[{"role":"assistant","tool_calls":[{"arguments":{}}]}]}`,
	`{"messages":[{"role":"assistant","tool_calls":{"name":"x"}}]}`,
	`{"messages":[{"role":"assistant","tool_calls":["x"]}]}`,
	`{"messages":[{"role":"assistant","tool_calls":[{"name":"x","function":"f"}]}]}`,
	`{"outcome":false}`,
	`{"reward":"high"}`,
	`{"labels":{"k":1}}`,
	`{"tokens":{"prompt":"1"}}`,
	`{"foo":1}`,
	`{"foo":{"messages":[]},"bar":["outcome"]}`,
	`{"a":"\"messages\"","b":"\\","c":[{"d":"}"}],"model":"m"}`,
	`{}`,
	`{ }`,
	` {"model" : "m" } `,
	`{"model":"m"} x`,
	`{"model":"m",}`,
	`{"model":"m"`,
	`{"model":}`,
	`{"model":tru}`,
	`{"messages":[{"role":"user","content":"\ud800"}]}`,
	"{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}",
	"{\"model\xff\":\"m\",\"outcome\":\"x\"}",
	`"text"`,
	`[1]`,
	``,
	`null`,
	`{"outcome":"x","outcome":5}`,
	`{"messages":[],"messages":"no"}`,
	`{"tools":null}`,
	`{"tools":[]}`,
	`{"cost_usd":1e400}`,
	`{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"a","name":"n","arguments":"{\"x\":1}"}]}],"reward":-0.5}`,
}

// TestParseRecordFastSameAsPlain: ParseRecord reads a conventional
// record in one pass (parseRecordFast); it must give what the plain way
// (parseRecord) gives, record and error, for every sample and the
// export fuzz corpus.
func TestParseRecordFastSameAsPlain(t *testing.T) {
	samples := append([]string(nil), recordSamples...)
	files, _ := filepath.Glob("internal/export/testdata/fuzz/FuzzRecordExport/*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			line = strings.TrimSpace(line)
			if v, ok := strings.CutPrefix(line, "[]byte("); ok {
				if s, err := strconv.Unquote(strings.TrimSuffix(v, ")")); err == nil {
					samples = append(samples, s)
				}
			}
		}
	}
	for _, s := range samples {
		checkParseRecordFast(t, []byte(s))
	}
}

func checkParseRecordFast(t *testing.T, raw []byte) {
	t.Helper()
	got, gerr := ParseRecord(raw)
	want, werr := parseRecord(trimSpace(raw))
	if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseRecord(%q) = %+v, %v; the plain way %+v, %v", raw, got, gerr, want, werr)
	}
}

func trimSpace(b []byte) []byte { return []byte(strings.TrimSpace(string(b))) }

func FuzzParseRecordFast(f *testing.F) {
	for _, s := range recordSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkParseRecordFast(t, raw)
	})
}
