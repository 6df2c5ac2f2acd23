package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/export"
)

// The words a skipped session's note gives, after where the name is.
const refusedName = ` is not 1 to 64 ASCII letters, digits, '_' or '-'`

// nameSessions commits, each as a session of two steps, tool definitions
// and tool calls with the function names of OpenAI's rule's edges, and
// returns the sessions openai-jsonl must skip, each with the words its
// note must give.
func nameSessions(t *testing.T, ws *cairn.Workspace) map[string]string {
	t.Helper()
	call := func(name string) string {
		n, _ := json.Marshal(name)
		return `{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":` + string(n) + `,"arguments":{}}]},{"role":"tool","tool_call_id":"c1","content":"r"},{"role":"assistant","content":"done"}]}`
	}
	tools := func(names ...string) string {
		var defs []string
		for _, name := range names {
			n, _ := json.Marshal(name)
			defs = append(defs, `{"type":"function","function":{"name":`+string(n)+`,"parameters":{"type":"object"}}}`)
		}
		return `{"messages":[{"role":"user","content":"q"}],"tools":[` + strings.Join(defs, ",") + `]}`
	}
	user := `{"messages":[{"role":"user","content":"q"}]}`
	a64, a65 := strings.Repeat("a", 64), strings.Repeat("b", 65)
	commitRecords(t, ws, "ok", tools(a64, "a-b", "_x_", "-", "_", "Z9"), call(a64))
	commitRecords(t, ws, "ok-dash", user, call("get_weather-2"))
	commitRecords(t, ws, "old-tools", tools("ns.tool"), `{"messages":[{"role":"assistant","content":"hi"}],"tools":[{"type":"function","function":{"name":"fine"}}]}`)
	commitRecords(t, ws, "cut", user, `{"messages":[{"role":"assistant","content":"let me see"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"my tool"}]}]}`)
	commitRecords(t, ws, "space", user, call("my tool"))
	commitRecords(t, ws, "dot", user, call("ns.tool"))
	commitRecords(t, ws, "long", user, call(a65))
	commitRecords(t, ws, "accent", user, call("données"))
	commitRecords(t, ws, "tool-def", tools("ok", "ns.tool"), call("ok"))
	return map[string]string{
		"space":    `space@2: messages[0].tool_calls[0]: function name "my tool"` + refusedName,
		"dot":      `dot@2: messages[0].tool_calls[0]: function name "ns.tool"` + refusedName,
		"long":     `long@2: messages[0].tool_calls[0]: function name "` + a65 + `" (65 characters)` + refusedName,
		"accent":   `accent@2: messages[0].tool_calls[0]: function name "données"` + refusedName,
		"tool-def": `tool-def@1: tools[1]: function name "ns.tool"` + refusedName,
	}
}

// TestOpenAIFunctionNames: OpenAI's chat and fine-tuning APIs take a
// function name of 1 to 64 ASCII letters, digits, '_' or '-' only, in a
// tool definition and a tool call, and refuse a whole upload holding
// another; openai-jsonl wrote any name as given. A session whose line
// would hold one is skipped, named, with where the name is; the others
// go out and read back (held whole and streamed alike); sharegpt, atif
// and parquet, whose readers take any name, keep it.
func TestOpenAIFunctionNames(t *testing.T) {
	ws := emptyStore(t)
	refused := nameSessions(t, ws)
	for name, words := range refused {
		out, sum, _ := runLong(t, ws, export.Options{Format: export.OpenAIJSONL, Sessions: []string{name}})
		if out != "" {
			t.Errorf("%s written: %s", name, out)
		}
		n := noted(sum.Skipped, "function name OpenAI's format refuses", name)
		if n == nil || n.Example != words || len(sum.Skipped) != 1 {
			t.Errorf("%s: skipped %+v, want it named, first: %s", name, sum.Skipped, words)
		}
	}
	out, sum, _ := runLong(t, ws, export.Options{Format: export.OpenAIJSONL})
	var written []string
	for _, l := range lines(t, out) {
		written = append(written, l["metadata"].(map[string]any)["session"].(string))
		if err := export.OpenAIChatError(asList(l["messages"])); err != nil {
			t.Errorf("%v: %v", l["metadata"], err)
		}
		if err := export.OpenAIToolsError(asList(l["tools"])); err != nil {
			t.Errorf("%v: %v", l["metadata"], err)
		}
	}
	slices.Sort(written)
	if want := []string{"cut", "ok", "ok-dash", "old-tools"}; !slices.Equal(written, want) {
		t.Errorf("wrote %v, want %v; skipped %+v", written, want, sum.Skipped)
	}
	if n := noted(sum.Skipped, "function name", "space"); n == nil || n.Sessions != int64(len(refused)) {
		t.Errorf("skipped %+v, want the %d sessions of refused names under one reason", sum.Skipped, len(refused))
	}
	if noted(sum.LeftOut, "the last assistant message left out", "cut") == nil {
		t.Errorf("cut: its last message, calling \"my tool\", not left out: %+v", sum.LeftOut)
	}
	pythonReadsNames(t, out, []string{"cut", "ok", "ok-dash", "old-tools"})

	// The other formats keep every name as given.
	for _, f := range []string{export.ShareGPT, export.ATIF, export.Parquet} {
		out, sum, _ := run(t, ws, export.Options{Format: f})
		if sum.Trajectories != 9 || len(sum.Skipped) != 0 {
			t.Errorf("%s: %d trajectories, skipped %+v; want all 9", f, sum.Trajectories, sum.Skipped)
		}
		if f != export.Parquet && !strings.Contains(out, `ns.tool`) {
			t.Errorf("%s: ns.tool not kept: %s", f, out)
		}
	}
}

// pythonReadsNames reads an openai-jsonl export with Python's json and
// re, an independent reader, and fails t unless every line's sessions
// are want and each function name matches OpenAI's pattern.
func pythonReadsNames(t *testing.T, out string, want []string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is not installed")
		}
		t.Skip("python3 is not installed")
	}
	const script = `
import json, re, sys
ok = re.compile(r"[a-zA-Z0-9_-]{1,64}")
sessions = []
for line in sys.stdin.read().splitlines():
    ex = json.loads(line)
    names = [t["function"]["name"] for t in ex.get("tools", [])]
    for m in ex["messages"]:
        names += [c["function"]["name"] for c in m.get("tool_calls") or []]
    for n in names:
        if not ok.fullmatch(n):
            sys.exit("%s: function name %r" % (ex["metadata"]["session"], n))
    sessions.append(ex["metadata"]["session"])
print(json.dumps(sorted(sessions)))
`
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = strings.NewReader(out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 reading the export: %v: %s", err, stderr.String())
	}
	var got []string
	if err := json.Unmarshal(b, &got); err != nil || !slices.Equal(got, want) {
		t.Errorf("python3 read sessions %s (%v), want %v", b, err, want)
	}
}

// TestLangGraphEmptyFunctionName: an adapter's state may hold a tool
// call with no name, which the convention refuses in a record but a
// LangGraph checkpoint can hold; OpenAI refuses the empty name too.
func TestLangGraphEmptyFunctionName(t *testing.T) {
	ws := langGraphWorkspace(t, func(st *langGraphStep) {
		st.State = bytes.ReplaceAll(st.State, []byte(`"name":"read"`), []byte(`"name":""`))
	})
	out, sum, _ := runLong(t, ws, export.Options{Format: export.OpenAIJSONL})
	if out != "" {
		t.Errorf("written: %s", out)
	}
	n := noted(sum.Skipped, "function name OpenAI's format refuses", "lg.dDE..0")
	if n == nil || n.Sessions != 2 || !strings.HasSuffix(n.Example, `.tool_calls[0]: function name ""`+refusedName) {
		t.Errorf("skipped %+v, want both threads, for the empty name", sum.Skipped)
	}
	out, sum, _ = run(t, ws, export.Options{Format: export.ShareGPT})
	if len(lines(t, out)) != 2 || len(sum.Skipped) != 0 {
		t.Errorf("sharegpt: %d lines, skipped %+v; want both threads", len(lines(t, out)), sum.Skipped)
	}
}

// TestPreferenceFunctionNames: a preference pair is OpenAI-shaped
// messages (OpenAI's DPO format), and OpenAI refuses a function name it
// does not allow in its prompt or an answer. A branch answering with one
// is skipped, named, and the others are still paired; a prompt holding
// one skips every branch it would pair, also when it is read from the
// fork point's own path (every branch pruned up to the point).
func TestPreferenceFunctionNames(t *testing.T) {
	ctx := context.Background()
	ws := emptyStore(t)
	commitRecords(t, ws, "p", `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"go"}]}`)
	for _, b := range []struct{ name, rec string }{
		{"p-good", `{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"get_it","arguments":{}}]},{"role":"tool","tool_call_id":"c1","content":"r"},{"role":"assistant","content":"good"}],"outcome":"success"}`},
		{"p-bad", `{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"get it","arguments":{}}]},{"role":"tool","tool_call_id":"c1","content":"r"},{"role":"assistant","content":"bad name"}],"outcome":"success"}`},
		{"p-worse", `{"messages":[{"role":"assistant","content":"no"}],"outcome":"failure"}`},
	} {
		fork(ctx, t, ws, "p@1", b.name)
		commitRecords(t, ws, b.name, b.rec)
	}
	// q's prompt calls "my tool".
	commitRecords(t, ws, "q",
		`{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"my tool"}]}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"c1","content":"r"},{"role":"user","content":"and?"}]}`)
	for _, b := range []struct{ name, rec string }{
		{"q-yes", `{"messages":[{"role":"assistant","content":"yes"}],"outcome":"success"}`},
		{"q-no", `{"messages":[{"role":"assistant","content":"no"}],"outcome":"failure"}`},
	} {
		fork(ctx, t, ws, "q@2", b.name)
		commitRecords(t, ws, b.name, b.rec)
	}
	pWords := `p-bad@2: messages[0].tool_calls[0]: function name "get it"` + refusedName
	qWords := `q@1: messages[1].tool_calls[0]: function name "my tool"` + refusedName
	check := func(what string) {
		t.Helper()
		out, sum, _ := runLong(t, ws, export.Options{Format: export.Preference})
		pairs := lines(t, out)
		if len(pairs) != 1 || sum.Pairs != 1 || !strings.Contains(out, `"good"`) {
			t.Fatalf("%s: %d pairs, want p-good's over p-worse's alone: %s", what, sum.Pairs, out)
		}
		for _, side := range []string{"chosen", "rejected"} {
			if err := export.OpenAIChatError(append(asList(pairs[0]["prompt"]), asList(pairs[0][side])...)); err != nil {
				t.Errorf("%s: prompt and %s: %v", what, side, err)
			}
		}
		n := noted(sum.Skipped, "function name OpenAI's format refuses", "p-bad")
		if n == nil || !slices.Equal(n.Names, []string{"p-bad", "q-no", "q-yes"}) || n.Example != pWords {
			t.Errorf("%s: skipped %+v, want p-bad, q-no and q-yes for their function names, first: %s", what, sum.Skipped, pWords)
		}
		out, sum, _ = runLong(t, ws, export.Options{Format: export.Preference, Sessions: []string{"q*"}})
		n = noted(sum.Skipped, "function name OpenAI's format refuses", "q-yes")
		if out != "" || n == nil || n.Sessions != 2 || n.Example != qWords {
			t.Errorf("%s: q's branches: wrote %q, skipped %+v; want both skipped for q's prompt, first: %s", what, out, sum.Skipped, qWords)
		}
	}
	check("held")
	// Each of q's branches pruned up to the fork point: the prompt is
	// read from q's own path.
	for _, name := range []string{"q-yes", "q-no"} {
		if _, err := ws.Prune(ctx, name, 1); err != nil {
			t.Fatal(err)
		}
	}
	check("q's branches pruned up to the fork point")
}
