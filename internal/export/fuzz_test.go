package export

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/jsontext"
)

// FuzzRecordExport feeds stored step records through the convention's
// decoder and every exporter: nothing may panic, every line written
// must be I-JSON (valid JSON that every reader reads alike), and every
// chat line must pass its reader's rules.
func FuzzRecordExport(f *testing.F) {
	for _, seed := range []string{
		`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"id":"1","name":"ls","arguments":{"p":1}}]},{"role":"tool","tool_call_id":"1","content":"x"}],"tokens":{"prompt":3,"completion":1},"cost_usd":0.1,"labels":{"k":"v"},"outcome":"success"}`,
		`{"messages":[{"role":"tool","content":"orphan result"}],"reward":-1,"agent":{"name":"a"}}`,
		`{"messages":[{"role":"assistant","tool_calls":[{"id":"","name":"f","arguments":null}]}],"tools":[{"type":"function"}]}`,
		`{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"let me look","tool_calls":[{"id":"1","name":"a","arguments":"{\"x\":1}"},{"id":"2","name":"b","arguments":"not json"}]},{"role":"tool","tool_call_id":"1","content":"r1"},{"role":"tool","tool_call_id":"2","content":"r2"},{"role":"user","content":"more"},{"role":"system","content":"late"}]}`,
		`{"messages":[{"role":"assistant","content":"first"},{"role":"assistant","content":"","tool_calls":[{"id":"1","name":"a","arguments":{}}]},{"role":"assistant","content":"after"}]}`,
		`{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c","name":"f","arguments":"{\"x\":1e400}"},{"id":"c","name":"g"}]},{"role":"tool","tool_call_id":"c","content":"1"},{"role":"tool","tool_call_id":"c","content":"2"}],"tools":[{"type":"function","function":{"name":"f","description":"\ud800"}}]}`,
		`{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"c","name":"f"},{"id":"c","name":"g"}]},{"role":"tool","tool_call_id":"c","content":"1"},{"role":"tool","tool_call_id":"c","content":"2"}]}`,
		`{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"c","name":"my tool"}]},{"role":"tool","tool_call_id":"c","content":"1"},{"role":"assistant","content":"ok"}],"tools":[{"type":"function","function":{"name":"ns.tool"}}]}`,
		`{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"ok"}],"tools":[{"type":"function","function":{"name":"a-b_C9"}}]}`,
		`{"foo":-1e400}`, `"raw"`, `{"foo":[1,2]}`, `{"messages":"x"}`, `{"labels":{"outcome":"fail"}}`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > 1<<16 {
			return
		}
		var record json.RawMessage
		if json.Valid(raw) {
			record = raw
		}
		// Two steps of the same record, each read on its own as the
		// pipeline reads them, then settled as it settles them.
		tr := &Trajectory{Session: "s", Labels: map[string]string{}}
		for n := uint64(1); n <= 2; n++ {
			st := &cairn.Step{Session: "s", Number: n, Time: time.Unix(0, 0), Record: record}
			s := Step{Step: st}
			if rec, err := cairn.ParseRecord(st.Record); err == nil {
				if rec.Validate() != nil {
					t.Fatalf("ParseRecord accepted a record Validate refuses: %s", raw)
				}
				if err := settleArguments(rec); err != nil {
					t.Fatalf("ParseRecord accepted arguments export cannot settle: %v: %s", err, raw)
				}
				s.Rec = rec
			}
			tr.Steps = append(tr.Steps, s)
		}
		settleCallIDs(tr)
		for _, line := range []func(*Trajectory, *verdict, bool) any{openAILine, shareGPTLine, atifLine} {
			if v := line(tr, &verdict{}, true); v != nil {
				b, err := json.Marshal(v)
				if err != nil || !json.Valid(b) {
					t.Fatalf("line for %s: %v", raw, err)
				}
				// I-JSON, which every reader takes alike: encoding/json
				// refuses a number no double holds.
				var back any
				if err := json.Unmarshal(b, &back); err != nil {
					t.Fatalf("line for %s does not read back: %v: %s", raw, err, b)
				}
				if err := jsontext.IJSON(b); err != nil {
					t.Fatalf("line for %s %v: %s", raw, err, b)
				}
			}
		}
		// Every openai-jsonl line passes OpenAI's rules on messages and
		// tools.
		if v := openAILine(tr, &verdict{}, false); v != nil {
			b, _ := json.Marshal(v)
			var ex struct{ Messages, Tools []any }
			if err := json.Unmarshal(b, &ex); err != nil {
				t.Fatal(err)
			}
			if err := OpenAIChatError(ex.Messages); err != nil {
				t.Fatalf("openai-jsonl line for %s: %v: %s", raw, err, b)
			}
			if err := OpenAIToolsError(ex.Tools); err != nil {
				t.Fatalf("openai-jsonl line for %s: %v: %s", raw, err, b)
			}
		}
		// Every ShareGPT line passes LLaMA-Factory's alternation rule.
		if v := shareGPTLine(tr, &verdict{}, false); v != nil {
			b, _ := json.Marshal(v)
			var ex struct{ Conversations []any }
			if err := json.Unmarshal(b, &ex); err != nil {
				t.Fatal(err)
			}
			if err := LlamaFactoryShareGPTError(ex.Conversations); err != nil {
				t.Fatalf("sharegpt line for %s: %v: %s", raw, err, b)
			}
		}
		if rows := rowsOf(tr, nil); len(rows) != 2 {
			t.Fatalf("%d rows for 2 steps", len(rows))
		}
		judge(tr.Steps)
	})
}
