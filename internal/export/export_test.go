package export_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/export"
)

// forkedWorkload builds, in a local directory store:
//
//	a       4 steps, outcome failure, label task=t1
//	a-alt   fork of a@3, 2 more steps, outcome success
//	a-alt2  fork of a-alt@3 (itself the copy of a@3), 1 more step, failure
//	b       3 steps, success, label task=t2; forked at its head, so not a leaf
//	b-next  fork of b@3, 1 more step
//	c       4 steps: raw records, one conventional user message, no record; status done
func forkedWorkload(t *testing.T) (*cairn.Workspace, string) {
	dir := t.TempDir()
	ws, err := cairn.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	fillForked(t, ws)
	return ws, dir
}

// fillForked commits forkedWorkload's sessions to ws.
func fillForked(t *testing.T, ws *cairn.Workspace) {
	ctx := context.Background()
	agentRun(ctx, t, ws, "a", 4, "failure", map[string]string{"task": "t1"})
	fork(ctx, t, ws, "a@3", "a-alt")
	continueRun(ctx, t, ws, "a-alt", 2, "success", nil)
	fork(ctx, t, ws, "a-alt@3", "a-alt2")
	continueRun(ctx, t, ws, "a-alt2", 1, "failure", nil)
	agentRun(ctx, t, ws, "b", 3, "success", map[string]string{"task": "t2"})
	fork(ctx, t, ws, "b@3", "b-next")
	continueRun(ctx, t, ws, "b-next", 1, "", nil)
	c, _ := ws.Session("c")
	for i, r := range []string{`{"foo":1}`, `{"messages":[{"role":"user","content":"only me"}]}`, `"text"`, ``} {
		opts := cairn.CommitOptions{Record: json.RawMessage(r)}
		if i == 3 {
			opts.Status = cairn.Done
		}
		if _, err := c.Commit(ctx, cairn.JSON([]byte(`{"i":1}`)), opts); err != nil {
			t.Fatal(err)
		}
	}
}

func run(t *testing.T, ws *cairn.Workspace, opts export.Options) (string, export.Summary, []export.ManifestHead) {
	t.Helper()
	var heads []export.ManifestHead
	opts.Head = func(r export.ManifestHead) error { heads = append(heads, r); return nil }
	var buf bytes.Buffer
	sum, err := export.Export(context.Background(), ws, &buf, opts)
	if err != nil {
		t.Fatalf("export %s: %v", opts.Format, err)
	}
	return buf.String(), sum, heads
}

// lines decodes every line of out as a JSON object, failing on any that is not one.
func lines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for n := 1; sc.Scan(); n++ {
		var obj map[string]any
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		if err := dec.Decode(&obj); err != nil || dec.More() {
			t.Fatalf("line %d is not one JSON object (%v): %.200s", n, err, sc.Text())
		}
		objs = append(objs, obj)
	}
	if !strings.HasSuffix(out, "\n") && out != "" {
		t.Fatalf("output does not end with a newline")
	}
	return objs
}

func headNames(heads []export.ManifestHead) []string {
	var names []string
	for _, h := range heads {
		names = append(names, h.Session)
	}
	return names
}

func TestOpenAIJSONL(t *testing.T) {
	ws, _ := forkedWorkload(t)
	out, sum, heads := run(t, ws, export.Options{Format: export.OpenAIJSONL})
	objs := lines(t, out)
	// c, a leaf too, holds only a user message: OpenAI's format refuses
	// an example without an assistant message, so it is skipped, named.
	if got, want := headNames(heads), []string{"a", "a-alt", "a-alt2", "b-next"}; !slices.Equal(got, want) {
		t.Fatalf("exported %v, want the leaves %v", got, want)
	}
	if len(objs) != 4 || sum.Trajectories != 4 || sum.Steps != 4+5+4+4 || sum.RawRecords != 0 {
		t.Fatalf("%d lines, summary %+v", len(objs), sum)
	}
	if !strings.Contains(skippedNames(sum)["c"], "no assistant message") {
		t.Fatalf("c not skipped for its missing assistant message: %+v", sum.Skipped)
	}
	roles := map[string]bool{"system": true, "user": true, "assistant": true, "tool": true}
	for i, o := range objs {
		msgs, ok := o["messages"].([]any)
		if !ok || len(msgs) == 0 {
			t.Fatalf("line %d: no messages: %v", i+1, o)
		}
		for _, m := range msgs {
			m := m.(map[string]any)
			if !roles[m["role"].(string)] {
				t.Fatalf("line %d: bad role in %v", i+1, m)
			}
			for _, tc := range asList(m["tool_calls"]) {
				tc := tc.(map[string]any)
				fn := tc["function"].(map[string]any)
				var args map[string]any
				if tc["type"] != "function" || tc["id"] == "" || json.Unmarshal([]byte(fn["arguments"].(string)), &args) != nil {
					t.Fatalf("line %d: bad tool call %v", i+1, tc)
				}
			}
			if m["role"] == "tool" && m["tool_call_id"] == nil {
				t.Fatalf("line %d: tool message without tool_call_id: %v", i+1, m)
			}
		}
	}
	// a-alt: a's first three steps (system, user, two tool rounds), then its own two.
	alt := objs[1]["messages"].([]any)
	if got := alt[len(alt)-1].(map[string]any)["content"]; got != "a-alt says 2" {
		t.Fatalf("a-alt ends with %v", got)
	}
	if len(alt) != 2+2+2+2 {
		t.Fatalf("a-alt has %d messages, want 8: %v", len(alt), alt)
	}
	if tools := asList(objs[0]["tools"]); len(tools) != 1 {
		t.Fatalf("a's tools = %v", objs[0]["tools"])
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func TestBranchesAll(t *testing.T) {
	ws, _ := forkedWorkload(t)
	_, sum, heads := run(t, ws, export.Options{Format: export.OpenAIJSONL, Branches: export.All})
	if got, want := headNames(heads), []string{"a", "a-alt", "a-alt2", "b", "b-next"}; !slices.Equal(got, want) {
		t.Fatalf("exported %v, want %v", got, want)
	}
	if sum.Trajectories != 5 || skippedNames(sum)["c"] == "" { // c: no assistant message
		t.Fatalf("summary %+v", sum)
	}
}

func TestSelectors(t *testing.T) {
	ws, _ := forkedWorkload(t)
	done := cairn.Done
	cases := []struct {
		name string
		opts export.Options
		want []string
	}{
		{"glob", export.Options{Sessions: []string{"a-*"}}, []string{"a-alt", "a-alt2"}},
		{"globs", export.Options{Sessions: []string{"a", "c"}}, []string{"a", "c"}},
		{"label", export.Options{Labels: map[string]string{"task": "t1"}}, []string{"a", "a-alt", "a-alt2"}},
		{"label inherited over a fork", export.Options{Labels: map[string]string{"task": "t2"}}, []string{"b-next"}},
		{"status", export.Options{Status: &done}, []string{"c"}},
		{"until the past", export.Options{Until: time.Now().Add(-time.Hour)}, nil},
		{"since the past", export.Options{Since: time.Now().Add(-time.Hour), Sessions: []string{"b*"}}, []string{"b-next"}},
		{"since the future", export.Options{Since: time.Now().Add(time.Hour)}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opts.Format = export.ATIF // which writes every session with a record, c too
			out, _, heads := run(t, ws, c.opts)
			if got := headNames(heads); !slices.Equal(got, c.want) {
				t.Fatalf("exported %v, want %v", got, c.want)
			}
			if n := len(lines(t, out)); n != len(c.want) {
				t.Fatalf("%d lines for %d trajectories", n, len(c.want))
			}
		})
	}
}

func TestShareGPT(t *testing.T) {
	ws, _ := forkedWorkload(t)
	out, _, _ := run(t, ws, export.Options{Format: export.ShareGPT})
	froms := map[string]bool{"system": true, "human": true, "gpt": true, "function_call": true, "observation": true}
	for i, o := range lines(t, out) {
		conv := asList(o["conversations"])
		if len(conv) == 0 || o["id"] == "" {
			t.Fatalf("line %d: %v", i+1, o)
		}
		for _, turn := range conv {
			turn := turn.(map[string]any)
			if !froms[turn["from"].(string)] {
				t.Fatalf("line %d: bad from in %v", i+1, turn)
			}
			if _, ok := turn["value"].(string); !ok {
				t.Fatalf("line %d: value not a string in %v", i+1, turn)
			}
		}
	}
}

func TestATIF(t *testing.T) {
	ws, _ := forkedWorkload(t)
	out, _, _ := runLong(t, ws, export.Options{Format: export.ATIF})
	objs := lines(t, out)
	if len(objs) != 5 {
		t.Fatalf("%d ATIF documents, want 5", len(objs))
	}
	sources := map[string]bool{"system": true, "user": true, "agent": true}
	for i, o := range objs {
		for _, k := range []string{"schema_version", "session_id", "agent", "steps", "final_metrics"} {
			if _, ok := o[k]; !ok {
				t.Fatalf("document %d lacks %q", i+1, k)
			}
		}
		if o["schema_version"] != export.ATIFVersion {
			t.Fatalf("schema_version %v", o["schema_version"])
		}
		agent := o["agent"].(map[string]any)
		if agent["name"] == "" || agent["version"] == "" {
			t.Fatalf("agent %v", agent)
		}
		calls := map[string]bool{}
		steps := asList(o["steps"])
		for j, s := range steps {
			s := s.(map[string]any)
			if s["step_id"].(float64) != float64(j+1) {
				t.Fatalf("document %d: step %d has step_id %v", i+1, j+1, s["step_id"])
			}
			if !sources[s["source"].(string)] {
				t.Fatalf("bad source %v", s["source"])
			}
			if _, ok := s["message"].(string); !ok {
				t.Fatalf("step without a message string: %v", s)
			}
			if _, err := time.Parse(time.RFC3339Nano, s["timestamp"].(string)); err != nil {
				t.Fatal(err)
			}
			for _, tc := range asList(s["tool_calls"]) {
				tc := tc.(map[string]any)
				if _, ok := tc["arguments"].(map[string]any); !ok || tc["function_name"] == "" {
					t.Fatalf("bad tool call %v", tc)
				}
				calls[tc["tool_call_id"].(string)] = true
			}
			if obs, ok := s["observation"].(map[string]any); ok {
				for _, r := range asList(obs["results"]) {
					if id := r.(map[string]any)["source_call_id"]; !calls[id.(string)] {
						t.Fatalf("observation for unknown call %v", id)
					}
				}
			}
		}
		fm := o["final_metrics"].(map[string]any)
		if fm["total_steps"].(float64) != float64(len(steps)) {
			t.Fatalf("total_steps %v for %d steps", fm["total_steps"], len(steps))
		}
	}
	a := objs[0]
	if a["session_id"] != "a" || a["agent"].(map[string]any)["name"] != "toy-agent" {
		t.Fatalf("a: %v %v", a["session_id"], a["agent"])
	}
	// a: system, user, agent(call), agent(call), agent(answer); tokens 100+150+100.
	if n := len(asList(a["steps"])); n != 5 {
		t.Fatalf("a has %d ATIF steps, want 5", n)
	}
	if fm := a["final_metrics"].(map[string]any); fm["total_prompt_tokens"].(float64) != 350 || fm["total_cached_tokens"].(float64) != 20 {
		t.Fatalf("a final_metrics %v", fm)
	}
	// c's raw records are system steps carrying the record in extra.
	c := asList(objs[4]["steps"])
	raw := c[0].(map[string]any)
	if raw["source"] != "system" || raw["extra"].(map[string]any)["record"].(map[string]any)["foo"].(float64) != 1 {
		t.Fatalf("c's first step %v", raw)
	}
}

func TestPreference(t *testing.T) {
	ws, _ := forkedWorkload(t)
	out, sum, heads := runLong(t, ws, export.Options{Format: export.Preference})
	objs := lines(t, out)
	// At a@3: a-alt (success) beats a (failure) and a-alt2 (failure).
	if len(objs) != 2 || sum.Pairs != 2 {
		t.Fatalf("%d pairs (summary %+v): %s", len(objs), sum, out)
	}
	if got, want := headNames(heads), []string{"a", "a-alt", "a-alt2"}; !slices.Equal(got, want) {
		t.Fatalf("heads %v, want %v", got, want)
	}
	rejected := map[string]bool{}
	for _, o := range objs {
		prompt, chosen, rej := asList(o["prompt"]), asList(o["chosen"]), asList(o["rejected"])
		if len(prompt) != 6 || len(chosen) != 2 || len(rej) == 0 {
			t.Fatalf("pair shape %d/%d/%d: %v", len(prompt), len(chosen), len(rej), o)
		}
		if prompt[1].(map[string]any)["content"] != "task for a" {
			t.Fatalf("prompt %v", prompt)
		}
		if got := chosen[1].(map[string]any)["content"]; got != "a-alt says 2" {
			t.Fatalf("chosen ends %v", got)
		}
		rejected[rej[len(rej)-1].(map[string]any)["content"].(string)] = true
	}
	if !rejected["answer of a"] || !rejected["a-alt2 says 1"] {
		t.Fatalf("rejected %v", rejected)
	}
}

// nodeModule finds node and a file of a pinned npm package that `make
// parquet-readers` installs under .cache/node; under CI=true their
// absence fails the test.
func nodeModule(t *testing.T, file string) (node, entry string) {
	t.Helper()
	missing := func(what string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (run `make parquet-readers`)", what)
		}
		t.Skipf("%s (run `make parquet-readers`)", what)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	entry, _ = filepath.Abs(filepath.Join("../../.cache/node/node_modules", file))
	if _, err := os.Stat(entry); err != nil {
		missing(file + " is not installed under .cache/node")
	}
	return node, entry
}

// parquetChunk is one column chunk as a reader saw it.
type parquetChunk struct {
	Column    string   `json:"column"`
	Encodings []string `json:"encodings"`
	PageTypes []string `json:"page_types"`
}

// readParquet reads file with hyparquet in node.
func readParquet(t *testing.T, file string) (rows []map[string]any, columns []string, groups int) {
	rows, columns, groups, _ = readParquetChunks(t, file)
	return rows, columns, groups
}

// readParquetChunks reads file with hyparquet in node, with its column chunks.
func readParquetChunks(t *testing.T, file string) (rows []map[string]any, columns []string, groups int, chunks []parquetChunk) {
	t.Helper()
	node, entry := nodeModule(t, "hyparquet/src/node.js")
	cmd := exec.Command(node, "testdata/readparquet.mjs", entry, file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hyparquet: %v: %s", err, stderr.String())
	}
	var res struct {
		NumRows   int              `json:"num_rows"`
		RowGroups int              `json:"row_groups"`
		Columns   []string         `json:"columns"`
		Rows      []map[string]any `json:"rows"`
		Chunks    []parquetChunk   `json:"chunks"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("hyparquet output: %v", err)
	}
	if res.NumRows != len(res.Rows) {
		t.Fatalf("metadata says %d rows, read %d", res.NumRows, len(res.Rows))
	}
	return res.Rows, res.Columns, res.RowGroups, res.Chunks
}

func TestParquetReadByHyparquet(t *testing.T) {
	ws, dir := forkedWorkload(t)
	file := filepath.Join(dir, "steps.parquet")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := export.Export(context.Background(), ws, f, export.Options{Format: export.Parquet})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	rows, columns, _ := readParquet(t, file)
	if int64(len(rows)) != sum.Steps || len(rows) != 21 {
		t.Fatalf("%d rows, summary says %d steps, want 21", len(rows), sum.Steps)
	}
	for _, c := range []string{"trajectory", "session", "step", "parent", "time", "role", "content", "tool_calls", "prompt_tokens", "labels", "record"} {
		if !slices.Contains(columns, c) {
			t.Fatalf("no column %q in %v", c, columns)
		}
	}
	byKey := map[string]map[string]any{}
	for _, r := range rows {
		byKey[r["trajectory"].(string)+"/"+r["session"].(string)+"@"+jsonNum(r["step"])] = r
	}
	first := byKey["a/a@1"]
	if first["labels"].(map[string]any)["task"] != "t1" || first["parent"] != nil || first["role"] != "user" {
		t.Fatalf("a@1 row %v", first)
	}
	forkRow := byKey["a-alt/a-alt@3"]
	if forkRow == nil || forkRow["origin"] != "a@3" || forkRow["parent"] != "a@2" || forkRow["position"].(float64) != 3 {
		t.Fatalf("a-alt@3 row %v", forkRow)
	}
	call := byKey["a/a@2"]
	var calls []map[string]any
	if err := json.Unmarshal([]byte(call["tool_calls"].(string)), &calls); err != nil || len(calls) != 1 || calls[0]["name"] != "read" {
		t.Fatalf("a@2 tool_calls %v (%v)", call["tool_calls"], err)
	}
	if call["prompt_tokens"].(float64) != 100 || call["cost_usd"].(float64) != 0.001 {
		t.Fatalf("a@2 metrics %v %v", call["prompt_tokens"], call["cost_usd"])
	}
	if _, err := time.Parse(time.RFC3339Nano, call["time"].(string)); err != nil {
		t.Fatalf("time %v: %v", call["time"], err)
	}
	raw := byKey["c/c@3"]
	if raw["record"] != `"text"` || raw["conventional"] != false || raw["role"] != nil {
		t.Fatalf("c@3 row %v", raw)
	}
	if byKey["c/c@4"]["record"] != nil {
		t.Fatalf("c@4 has no record, row %v", byKey["c/c@4"])
	}
}

func jsonNum(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestBadOptions(t *testing.T) {
	for _, o := range []export.Options{{Format: "csv"}, {Format: export.ATIF, Branches: "some"}, {Format: export.ATIF, Sessions: []string{"["}}} {
		if err := o.Validate(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

func TestManifestWriter(t *testing.T) {
	var buf bytes.Buffer
	mw, err := export.NewManifestWriter(&buf, export.ManifestHeader{Format: "atif", Args: []string{"--format", "atif"}})
	if err != nil {
		t.Fatal(err)
	}
	mw.Add(export.ManifestHead{StepRef: cairn.StepRef{Session: "a", Number: 3, ID: "ab"}})
	mw.Add(export.ManifestHead{StepRef: cairn.StepRef{Session: "b", Number: 1, ID: "cd"}, Steps: 1})
	if err := mw.Close(export.Summary{Trajectories: 2}); err != nil {
		t.Fatal(err)
	}
	var m struct {
		Version int             `json:"version"`
		Format  string          `json:"format"`
		Heads   []cairn.StepRef `json:"heads"`
		Summary export.Summary  `json:"summary"`
	}
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatalf("manifest %s: %v", buf.String(), err)
	}
	if m.Version != 1 || m.Format != "atif" || len(m.Heads) != 2 || m.Heads[1].Session != "b" || m.Summary.Trajectories != 2 {
		t.Fatalf("manifest %+v", m)
	}
}

func TestFromHeads(t *testing.T) {
	ws, _ := forkedWorkload(t)
	first, _, heads := run(t, ws, export.Options{Format: export.ATIF})
	agentRun(context.Background(), t, ws, "a-late", 2, "success", nil)
	yield := func(hs []export.ManifestHead) func(context.Context, func(export.ManifestHead) error) error {
		return func(_ context.Context, fn func(export.ManifestHead) error) error {
			for _, h := range hs {
				if err := fn(h); err != nil {
					return err
				}
			}
			return nil
		}
	}
	again, _, _ := run(t, ws, export.Options{Format: export.ATIF, FromHeads: yield(heads)})
	if again != first {
		t.Fatal("re-export from the heads differs from the first export")
	}
	bad := slices.Clone(heads)
	bad[2].ID = strings.Repeat("0", 64)
	_, err := export.Export(context.Background(), ws, &bytes.Buffer{}, export.Options{Format: export.ATIF, FromHeads: yield(bad)})
	if !errors.Is(err, export.ErrHeadMismatch) {
		t.Fatalf("tampered head: %v", err)
	}

	var buf bytes.Buffer
	mw, _ := export.NewManifestWriter(&buf, export.ManifestHeader{Format: "atif"})
	for _, h := range heads {
		mw.Add(h)
	}
	mw.Close(export.Summary{})
	var got []export.ManifestHead
	if err := export.ReadManifestHeads(&buf, func(r export.ManifestHead) error { got = append(got, r); return nil }); err != nil || !slices.Equal(got, heads) {
		t.Fatalf("ReadManifestHeads = %v, %v; want %v", got, err, heads)
	}
	for _, m := range []string{``, `[]`, `{"heads":{}}`, `{"heads":[{"session":"a"}]}`, `{"format":"x"}`} {
		if err := export.ReadManifestHeads(strings.NewReader(m), func(export.ManifestHead) error { return nil }); err == nil {
			t.Errorf("manifest %q: no error", m)
		}
	}
}
