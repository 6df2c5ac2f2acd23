package export_test

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/export"
)

// A Parquet, openai-jsonl, sharegpt or ATIF export holds a trajectory
// whole only while it is short; a longer one is read again and written a
// few rows, messages, turns or ATIF steps at a time (long.go).
// The file must not tell: exported holding a step, two, three or five
// at a time, or a run of steps per byte, in row groups of several
// sizes, every store of records below gives the file, summary and heads
// it gives held whole — tool calls without ids (call_<step>_<n>, beside
// an agent's own call_2_1), results without ids whose run spans steps,
// a stray result, arguments of the wrong kind, a record of the wrong
// shape, raw records, labels, outcomes and rewards given and taken back
// across steps, a pruned session, forks, ATIF results answering a call
// far back, usage without an answer and reused call ids — and a
// re-export from its heads too.
func TestLongTrajectorySameFile(t *testing.T) {
	ctx := context.Background()
	ws, _ := forkedWorkload(t)
	commitRecords(t, ws, "ids",
		`{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"","tool_calls":[{"name":"ls","arguments":{"x":"a"}},{"id":"","name":"cat","arguments":"{\"x\":\"b\"}"}]},{"role":"tool","content":"a"}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"","content":"b"}],"labels":{"k":"1"}}`,
		`{"messages":[{"role":"tool","content":"stray"},{"role":"assistant","content":"","tool_calls":[{"id":"call_2_1","name":"ls"}]}]}`,
		`{"messages":[{"role":"tool","name":"ls","content":"c"},{"role":"assistant","content":"","tool_calls":[{"name":"ls","arguments":null}]}],"outcome":"failure","reward":0.25}`,
		`{"messages":[{"role":"tool","content":"d"},{"role":"assistant","content":"x","tool_calls":[{"name":"n","arguments":7}]}]}`,
		`{"messages":[{"role":"robot","content":"?"}]}`,
		`{"foo":1}`,
		`"text"`,
		``,
		`{"labels":{"k":"2","outcome":"success"},"reward":1}`,
		`{"outcome":false}`,
		`{"messages":[{"role":"assistant","content":"done"}],"model":"m","tokens":{"prompt":3,"completion":2}}`)
	var long []string
	for i := range 40 {
		long = append(long, fmt.Sprintf(`{"messages":[{"role":"user","content":"q%d"},{"role":"assistant","content":"","tool_calls":[{"name":"run","arguments":{"i":%d}}]},{"role":"tool","content":"r%d"},{"role":"assistant","content":"a%d"}],"labels":{"i":"%d"}}`, i, i, i, i, i%3))
	}
	commitRecords(t, ws, "long", long...)
	commitRecords(t, ws, "pruned", long[:12]...)
	if _, err := ws.Prune(ctx, "pruned", 5); err != nil {
		t.Fatal(err)
	}
	fork(ctx, t, ws, "long@20", "long-fork")
	commitRecords(t, ws, "long-fork", long[30:]...)
	// What decides which messages an openai-jsonl line keeps, if any.
	commitRecords(t, ws, "cut",
		`{"messages":[{"role":"system","content":"be <brief> & right"},{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"a"}}],"model":"m1"}`,
		`{"foo":"raw"}`,
		`{"messages":[{"role":"assistant","content":"hello","reasoning":"r"}],"tools":[],"model":"m2"}`,
		`{"messages":[{"role":"user","content":"more"}],"tools":[{"type":"function","function":{"name":"b"}}]}`,
		`{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"x","name":"b","arguments":"{\"q\":1}"},{"id":"y","name":"b"}]}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"x","content":"1"}],"model":""}`)
	commitRecords(t, ws, "cut-only",
		`{"messages":[{"role":"user","content":"hi"}]}`,
		`{"messages":[{"role":"assistant","content":"","tool_calls":[{"name":"b"}]}]}`)
	commitRecords(t, ws, "hole",
		`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"name":"b"}]}]}`,
		`{"messages":[{"role":"user","content":"well?"},{"role":"assistant","content":"no"}]}`)
	commitRecords(t, ws, "no-call",
		`{"messages":[{"role":"user","content":"hi"}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"z","content":"?"},{"role":"assistant","content":"no"}]}`)
	commitRecords(t, ws, "other-id",
		`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"b"}]}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"c1","content":"1"},{"role":"tool","tool_call_id":"c9","content":"9"}]}`,
		`{"messages":[{"role":"assistant","content":"done"}]}`)
	commitRecords(t, ws, "raw-only", `{"foo":1}`, `{"bar":2}`)
	// What decides a sharegpt line's turns.
	commitRecords(t, ws, "gpt-first",
		`{"messages":[{"role":"assistant","content":"hi"}]}`,
		`{"messages":[{"role":"user","content":"x"},{"role":"assistant","content":"y"}]}`)
	commitRecords(t, ws, "turns",
		`{"messages":[{"role":"system","content":"s1"},{"role":"system","content":"s2"},{"role":"user","content":"u1"}]}`,
		`{"messages":[{"role":"user","content":"u2"},{"role":"assistant","content":"a1"}]}`,
		`{"messages":[{"role":"assistant","content":"a2"},{"role":"assistant","content":"let me","tool_calls":[{"id":"p1","name":"f"},{"id":"p2","name":"g","arguments":"not json"}]}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"p2","content":"2"},{"role":"tool","tool_call_id":"p1","content":"1"}]}`,
		`{"messages":[{"role":"user","content":"and?"},{"role":"system","content":"late"},{"role":"assistant","content":"","tool_calls":[{"id":"p3","name":"f"}]}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"p3","content":"3"},{"role":"assistant","content":"more","tool_calls":[{"id":"p4","name":"f"}]}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"p4","content":"4"}]}`,
		`{"messages":[{"role":"assistant","content":"done"},{"role":"user","content":"thanks"}]}`,
		`{"messages":[{"role":"user","content":"bye"}]}`)
	// What joins ATIF steps across cairn steps: a result answering a
	// call made steps before (or none on the path, before any agent
	// step and after), usage recorded without an answer, reused ids.
	commitRecords(t, ws, "atif",
		`{"messages":[{"role":"tool","tool_call_id":"u0","content":"early"},{"role":"user","content":"go"}],"tokens":{"prompt":1,"completion":1},"cost_usd":0.1}`,
		`{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"far","name":"f"},{"id":"call_1","name":"g","arguments":"not json"}]}],"agent":{"name":"a","version":"1"},"model":"m"}`,
		`{"messages":[{"role":"tool","tool_call_id":"call_1","content":"g1"},{"role":"user","content":"and"}],"latency_ms":5}`,
		`{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"call_1","name":"g"},{"id":"call_1#2","name":"g"},{"id":"call_1","name":"g"}]}],"tokens":{"prompt":2,"completion":3,"cached":1},"cost_usd":0.2}`,
		`{"tokens":{"prompt":5,"completion":1},"cost_usd":0.3}`,
		`{"messages":[{"role":"tool","tool_call_id":"call_1","content":"g2"}]}`,
		`{"messages":[{"role":"user","content":"wait"}],"agent":{"name":"b"}}`,
		`{"messages":[{"role":"tool","tool_call_id":"nope","content":"?"},{"role":"tool","tool_call_id":"call_1","content":"g3"}]}`,
		`{"messages":[{"role":"user","content":"more"}],"tokens":{"prompt":7,"completion":1},"labels":{"x":"y"}}`,
		`{"foo":2}`,
		`{"messages":[{"role":"tool","tool_call_id":"call_1#2","content":"g4"},{"role":"tool","tool_call_id":"far","content":"at last"},{"role":"assistant","content":"done"}],"outcome":"success"}`,
		`{"messages":[{"role":"tool","tool_call_id":"far","content":"again"}],"cost_usd":0.4}`)
	commitRecords(t, ws, "atif-empty", `{"labels":{"k":"v"}}`, ``, `{"tokens":{"prompt":1,"completion":1}}`)

	type format struct {
		name   string
		opts   export.Options
		groups []int
	}
	for _, f := range []format{
		{"parquet", export.Options{Format: export.Parquet}, []int{0, 7, 64, 100}},
		{"openai-jsonl", export.Options{Format: export.OpenAIJSONL}, []int{0}},
		{"openai-jsonl without metadata", export.Options{Format: export.OpenAIJSONL, NoMetadata: true}, []int{0}},
		{"sharegpt", export.Options{Format: export.ShareGPT}, []int{0}},
		{"sharegpt without metadata", export.Options{Format: export.ShareGPT, NoMetadata: true}, []int{0}},
		{"atif", export.Options{Format: export.ATIF}, []int{0}},
	} {
		for _, branches := range []string{export.Leaves, export.All} {
			for _, group := range f.groups {
				opts := f.opts
				opts.Branches = branches
				restore := export.SetHoldForTest(1<<30, 1<<40, group)
				want, wantSum, wantHeads := run(t, ws, opts)
				restore()
				for _, hold := range []struct {
					steps int
					bytes int64
				}{{1, 1 << 40}, {2, 1 << 40}, {3, 1 << 40}, {5, 1 << 40}, {1 << 30, 1}, {4, 3000}} {
					what := fmt.Sprintf("%s, branches %s, row groups of %d, holding %d steps or %d bytes", f.name, branches, group, hold.steps, hold.bytes)
					restore := export.SetHoldForTest(hold.steps, hold.bytes, group)
					got, sum, heads := run(t, ws, opts)
					again, _, _ := run(t, ws, export.Options{Format: opts.Format, NoMetadata: opts.NoMetadata, FromHeads: eachHead(heads)})
					restore()
					if !bytes.Equal([]byte(got), []byte(want)) {
						t.Errorf("%s: the file differs from the one written holding each trajectory whole", what)
					}
					if again != want {
						t.Errorf("%s: the re-export from the heads differs", what)
					}
					if !reflect.DeepEqual(sum, wantSum) || !reflect.DeepEqual(heads, wantHeads) {
						t.Errorf("%s: summary %+v, heads %v; held whole: %+v, %v", what, sum, heads, wantSum, wantHeads)
					}
				}
			}
		}
	}
	// The store holds what the test means it to.
	_, sum, _ := run(t, ws, export.Options{Format: export.Parquet})
	notes := fmt.Sprint(sum.LeftOut)
	for _, want := range []string{"pruned", "without a tool_call_id", "wrong shape", "arguments is not"} {
		if !strings.Contains(notes, want) {
			t.Errorf("parquet: no note says %q: %s", want, notes)
		}
	}
	out, sum, _ := run(t, ws, export.Options{Format: export.OpenAIJSONL})
	notes = fmt.Sprint(sum.LeftOut, sum.Skipped)
	for _, want := range []string{"the last assistant message left out", "raw records", "no assistant message", "follows no tool call",
		"before the conversation goes on", "no call of the assistant message", "wrong shape", "cut-only"} {
		if !strings.Contains(notes, want) {
			t.Errorf("openai-jsonl: no note says %q: %s", want, notes)
		}
	}
	for _, want := range []string{`"tools":[{"type":"function","function":{"name":"b"}}]`, `"model":"m2"`, `"forked_from":"long@20"`, `<brief> &`, `"reasoning_content":"r"`} {
		if !strings.Contains(out, want) {
			t.Errorf("openai-jsonl: no line holds %s", want)
		}
	}
	out, sum, _ = run(t, ws, export.Options{Format: export.ShareGPT})
	notes = fmt.Sprint(sum.LeftOut, sum.Skipped)
	for _, want := range []string{"starts with the assistant", "no assistant turn", "text beside tool calls", "reasoning left out", "trailing user or tool turns"} {
		if !strings.Contains(notes, want) {
			t.Errorf("sharegpt: no note says %q: %s", want, notes)
		}
	}
	for _, want := range []string{`{"from":"system","value":"s1\n\ns2"}`, `{"from":"observation","value":"[\"1\",\"2\"]\n\nand?\n\nlate"}`} {
		if !strings.Contains(out, want) {
			t.Errorf("sharegpt: no line holds %s", want)
		}
	}
	out, _, _ = run(t, ws, export.Options{Format: export.ATIF})
	for _, want := range []string{`{"source_call_id":"far","content":"at last"},{"source_call_id":"far","content":"again"}]}`,
		`{"source_call_id":"call_1#4","content":"g3"}`, `"metrics":{"prompt_tokens":14,"completion_tokens":5,"cached_tokens":1,"cost_usd":0.5}`,
		`"message":"done","metrics":{"cost_usd":0.4}`, `"unmatched_tool_call_ids":["nope"]`, `"agent":{"name":"a","version":"1","model_name":"m"}`} {
		if !strings.Contains(out, want) {
			t.Errorf("atif: no line holds %s", want)
		}
	}
}

// eachHead yields heads, for Options.FromHeads.
func eachHead(heads []export.ManifestHead) func(context.Context, func(export.ManifestHead) error) error {
	return func(_ context.Context, yield func(export.ManifestHead) error) error {
		for _, h := range heads {
			if err := yield(h); err != nil {
				return err
			}
		}
		return nil
	}
}

// runLong is run, but it also exports ws holding one, two and three
// steps of a trajectory at a time (long.go), and fails t if a file
// differs from the one written holding each trajectory whole.
func runLong(t *testing.T, ws *cairn.Workspace, opts export.Options) (string, export.Summary, []export.ManifestHead) {
	t.Helper()
	out, sum, heads := run(t, ws, opts)
	for _, steps := range []int{1, 2, 3} {
		restore := export.SetHoldForTest(steps, 1<<40, 0)
		got, gotSum, gotHeads := run(t, ws, opts)
		restore()
		if got != out || !reflect.DeepEqual(gotSum, sum) || !reflect.DeepEqual(gotHeads, heads) {
			t.Errorf("export %s holding %d steps at a time differs from holding each trajectory whole:\n%s\nheld whole:\n%s", opts.Format, steps, got, out)
		}
	}
	return out, sum, heads
}

// TestLongPreferenceSamePairs: preference pairs from branches too long
// to hold are read again and written a message at a time (preference.go);
// the pairs and the summary must be what holding every branch whole
// gives, whichever branch gives the prompt: tool calls without ids whose
// results come steps later, a raw record, a call left unanswered at a
// branch's end, a broken branch, a branch without an answer, a fork of
// a fork, a branch pruned up to the fork point.
func TestLongPreferenceSamePairs(t *testing.T) {
	ctx := context.Background()
	ws := emptyStore(t)
	commitRecords(t, ws, "p",
		`{"messages":[{"role":"system","content":"s"},{"role":"user","content":"go"}]}`,
		`{"messages":[{"role":"assistant","content":"","tool_calls":[{"name":"ls","arguments":{"x":1}},{"name":"cat","arguments":"{}"}]}]}`,
		`{"messages":[{"role":"tool","content":"a"}]}`,
		`{"messages":[{"role":"tool","name":"cat","content":"b"},{"role":"assistant","content":"so"}],"foo":1}`,
		`{"bar":2}`,
		`{"messages":[{"role":"user","content":"more"}]}`)
	for _, b := range []struct {
		name string
		recs []string
	}{
		{"p", []string{`{"messages":[{"role":"assistant","content":"p says"}]}`, `{"outcome":"failure"}`}},
		{"p-a", []string{`{"messages":[{"role":"assistant","content":"","tool_calls":[{"name":"ls"}]}]}`,
			`{"messages":[{"role":"tool","content":"c"},{"role":"assistant","content":"p-a says"}]}`,
			`{"messages":[{"role":"user","content":"and?"},{"role":"assistant","content":"ok"},{"role":"assistant","content":"","tool_calls":[{"id":"q","name":"ls"}]}],"outcome":"success"}`}},
		{"p-b", []string{`{"messages":[{"role":"assistant","content":"p-b says"}],"reward":0.5}`}},
		{"p-c", []string{`{"messages":"no"}`, `{"messages":[{"role":"assistant","content":"p-c says"}],"reward":0.9}`}},
		{"p-d", []string{`{"messages":[{"role":"user","content":"p-d asks"}],"reward":0.7}`}},
	} {
		if b.name != "p" {
			fork(ctx, t, ws, "p@6", b.name)
		}
		commitRecords(t, ws, b.name, b.recs...)
	}
	fork(ctx, t, ws, "p-a@8", "p-a-a")
	commitRecords(t, ws, "p-a-a", `{"messages":[{"role":"assistant","content":"p-a-a says"}],"reward":0.8}`)
	out, sum, _ := runLong(t, ws, export.Options{Format: export.Preference})
	if sum.Pairs != 4 || !strings.Contains(out, `"p-a-a says"`) {
		t.Fatalf("%d pairs, want 4, p-a-a's among them: %s", sum.Pairs, out)
	}
	// Pruned up to the point, p's prompt comes from another path.
	if _, err := ws.Prune(ctx, "p", 2); err != nil {
		t.Fatal(err)
	}
	out, sum, _ = runLong(t, ws, export.Options{Format: export.Preference})
	if sum.Pairs != 4 || !strings.Contains(out, `"p says"`) {
		t.Fatalf("p, pruned up to the fork point, is not paired (%d pairs): %s", sum.Pairs, out)
	}
}
