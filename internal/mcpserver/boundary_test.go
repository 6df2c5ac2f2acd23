package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// toolSchemas returns each tool's input and output schema as the client sees them.
func toolSchemas(t *testing.T, cs *mcp.ClientSession) (in, out map[string]*jsonschema.Schema) {
	t.Helper()
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	in, out = map[string]*jsonschema.Schema{}, map[string]*jsonschema.Schema{}
	for _, tool := range lt.Tools {
		for _, x := range []struct {
			from any
			to   map[string]*jsonschema.Schema
		}{{tool.InputSchema, in}, {tool.OutputSchema, out}} {
			if x.from == nil {
				continue
			}
			b, _ := json.Marshal(x.from)
			var sch jsonschema.Schema
			if err := json.Unmarshal(b, &sch); err != nil {
				t.Fatalf("%s: schema %s: %v", tool.Name, b, err)
			}
			x.to[tool.Name] = &sch
		}
	}
	return in, out
}

// TestCheckpointRecord (issue 15 item 13): checkpoint stores the record's
// keys in the order sent, as the CLI and HTTP do; its schema types the
// record as an object; a JSON string holding an object is accepted too.
func TestCheckpointRecord(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	cs := connect(t, ws)
	in, _ := toolSchemas(t, cs)
	if rec := in[ToolCheckpoint].Properties["record"]; rec == nil || rec.Type != "object" {
		t.Fatalf("checkpoint's record schema = %+v, want type object", rec)
	}
	const rec = `{"zeta":1,"model":"m","alpha":{"y":2,"b":3}}`
	for i, args := range []string{
		`{"session":"a","state_json":"{}","record":` + rec + `}`,
		`{"session":"a","state_json":"{}","record":` + strconvQuote(rec) + `}`,
	} {
		var st StepInfo
		call(t, cs, ToolCheckpoint, json.RawMessage(args), &st, false)
		s, _ := ws.Session("a")
		got, err := s.Step(ctx, uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Record) != rec {
			t.Errorf("checkpoint %s stored record %s, want %s", args, got.Record, rec)
		}
	}
	for _, bad := range []string{`[1,2]`, `"not json"`, `"[1]"`, `7`} {
		msg := call(t, cs, ToolCheckpoint, json.RawMessage(`{"session":"a","state_json":"{}","record":`+bad+`}`), nil, true)
		if !strings.Contains(msg, "record: ") || !strings.Contains(msg, "JSON object") {
			t.Errorf("record %s: error %q", bad, msg)
		}
	}
	for args, want := range map[string]string{
		`{"session":"a","state_json":"{}","expect":1.5}`: "expect: want a step number",
		`{"session":"a","state_json":"{}","expect":-1}`:  "expect: want a step number, 0 or more, not -1",
		`{"session":"a","state_json":"{}","colour":1}`:   `unknown argument "colour"`,
		`{"session":".a","state_json":"{}"}`:             `session ".a"`,
		`{"session":"a"}`:                                "state_json is required",
	} {
		if msg := call(t, cs, ToolCheckpoint, json.RawMessage(args), nil, true); !strings.Contains(msg, want) || strings.Contains(msg, "Go struct") {
			t.Errorf("checkpoint %s: error %q, want it to say %q", args, msg, want)
		}
	}
}

// strconvQuote returns s as a JSON string.
func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestCheckpointWarns (issue 15 item 13): a record that uses the
// convention's keys wrongly is stored, with a warning in the result, as
// the CLI prints one on stderr.
func TestCheckpointWarns(t *testing.T) {
	ws := cairn.OpenStore(mem.New())
	cs := connect(t, ws)
	for rec, warn := range map[string]bool{
		`{"messages":"hello"}`:                          true,
		`{"reward":"high"}`:                             true,
		`{"messages":[{"role":"user","content":"hi"}]}`: false,
		`{"anything":1}`:                                false,
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolCheckpoint,
			Arguments: json.RawMessage(`{"session":"w","state_json":"{}","record":` + rec + `}`)})
		if err != nil || res.IsError {
			t.Fatalf("checkpoint with record %s: %v %+v", rec, err, res)
		}
		var out struct{ Warning string }
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		if got := out.Warning != "" && strings.Contains(out.Warning, "docs/records.md") && strings.Contains(text.String(), "warning: "); got != warn {
			t.Errorf("record %s: warning %q (text %q), want a warning: %v", rec, out.Warning, text.String(), warn)
		}
	}
}

// TestResumeNewSession (issue 15 item 13): resume of a session with no
// steps says so and describes no step (no step 0, empty id or time), and
// every result matches the output schema the tool advertises.
func TestResumeNewSession(t *testing.T) {
	ws := cairn.OpenStore(mem.New())
	cs := connect(t, ws)
	_, out := toolSchemas(t, cs)
	resolved, err := out[ToolResume].Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	check := func(args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolResume, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("resume %v: %v %+v", args, err, res)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		if err := resolved.Validate(v); err != nil {
			t.Fatalf("resume %v = %s: does not match its output schema: %v", args, b, err)
		}
		return v
	}
	v := check(map[string]any{"session": "fresh"})
	if v["new"] != true || v["session"] != "fresh" {
		t.Fatalf("resume of a new session = %v", v)
	}
	for _, k := range []string{"step", "id", "time", "parent", "kind", "state_json"} {
		if _, ok := v[k]; ok {
			t.Errorf("resume of a new session carries %q: %v", k, v)
		}
	}
	call(t, cs, ToolCheckpoint, map[string]any{"session": "fresh", "state_json": `{"a":1}`}, nil, false)
	v = check(map[string]any{"session": "fresh"})
	if v["new"] != false || v["step"] != float64(1) || len(v["id"].(string)) != 64 || v["state_json"] != `{"a":1}` {
		t.Fatalf("resume after a checkpoint = %v", v)
	}
}

// TestLogLimit (issue 15 item 13): a limit of 0 or less is an error, not
// "everything".
func TestLogLimit(t *testing.T) {
	ws := cairn.OpenStore(mem.New())
	cs := connect(t, ws)
	for range 3 {
		call(t, cs, ToolCheckpoint, map[string]any{"session": "l", "state_json": `{}`}, nil, false)
	}
	for _, limit := range []int{0, -1, 10001} {
		if msg := call(t, cs, ToolLog, map[string]any{"ref": "l", "limit": limit}, nil, true); !strings.Contains(msg, "want 1 to 10000") {
			t.Errorf("log limit %d: error %q", limit, msg)
		}
	}
	var lg LogOut
	call(t, cs, ToolLog, map[string]any{"ref": "l", "limit": 2}, &lg, false)
	if len(lg.Steps) != 2 {
		t.Fatalf("log limit 2 = %d steps", len(lg.Steps))
	}
	call(t, cs, ToolLog, map[string]any{"ref": "l"}, &lg, false)
	if len(lg.Steps) != 3 {
		t.Fatalf("log without a limit = %d steps", len(lg.Steps))
	}
}

// TestAnswersBounded: a tool's answer was built in memory whatever its
// size: one log of 1,000 steps of 200 KB records took cairn mcp to 3 GB
// to write a line of 400 MB that no client takes (10,000 steps: 30 GB),
// and show and resume held any state whole, three times over. An answer
// past MaxAnswer (a state or records past maxPayload) is a tool error
// now, in words, and nothing past it is built; answers within it are as
// ever, and within the line a client takes.
func TestAnswersBounded(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	s, err := ws.Session("big")
	if err != nil {
		t.Fatal(err)
	}
	record := `{"note":"` + strings.Repeat("r", 3<<20) + `"}` // three of these pass maxPayload
	for i := range 3 {
		state := `{"n":` + string(rune('1'+i)) + `}`
		if _, err := s.Commit(ctx, cairn.JSON([]byte(state)), cairn.CommitOptions{Record: json.RawMessage(record)}); err != nil {
			t.Fatal(err)
		}
	}
	chunk := `"` + strings.Repeat("abcdefghijklmnopqrstuvwxyz012345", 1<<15) + `"` // 1 MiB
	huge := "[" + strings.Repeat(chunk+",", maxPayload>>20) + chunk + "]"
	h, err := ws.Session("huge")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Commit(ctx, cairn.JSON([]byte(huge)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	// Within maxPayload, but its escapes grow it past MaxAnswer on the line.
	q, err := ws.Session("quotes")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Commit(ctx, cairn.JSON([]byte(`["`+strings.Repeat(`\"`, 2<<20)+`"]`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, ws)
	if msg := call(t, cs, ToolShow, map[string]any{"ref": "quotes"}, nil, true); !strings.Contains(msg, "show: the answer would be") || !strings.Contains(msg, "more than the 16777216 one answer carries") {
		t.Errorf("show of a state whose escapes pass MaxAnswer: %q", msg)
	}

	if msg := call(t, cs, ToolLog, map[string]any{"ref": "big"}, nil, true); !strings.Contains(msg, "the 3 steps from big@3 hold more than 8388608 bytes of records, more than one answer carries: ask for fewer (limit 2)") {
		t.Errorf("log past MaxAnswer: %q", msg)
	}
	var lg LogOut
	call(t, cs, ToolLog, map[string]any{"ref": "big", "limit": 2}, &lg, false)
	if len(lg.Steps) != 2 {
		t.Errorf("log of 2 steps within MaxAnswer: %d steps", len(lg.Steps))
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{ToolShow, map[string]any{"ref": "huge"}},
		{ToolResume, map[string]any{"session": "huge"}},
	} {
		if msg := call(t, cs, c.tool, c.args, nil, true); !strings.Contains(msg, "the state of huge@1 is more than 8388608 bytes, more than one answer carries: read it with `cairn show huge@1`") {
			t.Errorf("%s of a state past MaxAnswer: %q", c.tool, msg)
		}
	}
	var shown StepState
	call(t, cs, ToolShow, map[string]any{"ref": "huge", "record_only": true}, &shown, false)
	call(t, cs, ToolShow, map[string]any{"ref": "big@1"}, &shown, false)
	if shown.StateJSON != `{"n":1}` {
		t.Errorf("show within MaxAnswer: state %q", shown.StateJSON)
	}
}

// TestStateJSONSyntaxSaid: checkpoint said only "state_json is not valid
// JSON text" of the JSON an agent got wrong (a trailing comma, quotes
// pasted from a document, a byte order mark), so the model calling it had
// nothing to fix by. It says where and what now.
func TestStateJSONSyntaxSaid(t *testing.T) {
	cs := connect(t, cairn.OpenStore(mem.New()))
	for in, says := range map[string]string{
		`{"a":1,}`:          "at byte 8: invalid character '}' looking for beginning of object key string",
		"{\u201ca\u201d:1}": "at byte 2: invalid character '\u201c' looking for beginning of object key string",
		"\ufeff{}":          "at byte 1: it starts with a byte order mark (U+FEFF)",
		`{"a":`:             "at byte 5: unexpected end of JSON input",
	} {
		msg := call(t, cs, ToolCheckpoint, map[string]any{"session": "s", "state_json": in}, nil, true)
		if !strings.Contains(msg, "state_json is not valid JSON text: "+says) {
			t.Errorf("state_json %q: %q; want it to say %q", in, msg, says)
		}
	}
}
