package export_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/export"
)

func shapesWorkspace(t *testing.T) *cairn.Workspace {
	t.Helper()
	ws, err := cairn.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	fillShapes(t, ws)
	return ws
}

// byID indexes JSONL lines by a key's value.
func byID(t *testing.T, out, key string) map[string]map[string]any {
	t.Helper()
	m := map[string]map[string]any{}
	for _, o := range lines(t, out) {
		id, _ := o[key].(string)
		if id == "" {
			if meta, ok := o["metadata"].(map[string]any); ok {
				id, _ = meta["session"].(string)
			}
		}
		m[id] = o
	}
	return m
}

// skippedNames maps each skipped session to its reason.
func skippedNames(sum export.Summary) map[string]string {
	m := map[string]string{}
	for _, n := range sum.Skipped {
		for _, s := range n.Names {
			m[s] = n.Reason
		}
	}
	return m
}

// OpenAI-style tool calls carry arguments as a JSON string; each chat
// format gets what its trainers read, and no message vanishes.
func TestToolCallArgumentsAsString(t *testing.T) {
	ws := shapesWorkspace(t)
	sel := []string{"args-string"}

	out, sum, heads := run(t, ws, export.Options{Format: export.OpenAIJSONL, Sessions: sel})
	if len(heads) != 1 || len(sum.Skipped) != 0 {
		t.Fatalf("openai-jsonl: exported %v, skipped %+v; want args-string", headNames(heads), sum.Skipped)
	}
	var args []string
	msgs := asList(lines(t, out)[0]["messages"])
	for _, m := range msgs {
		for _, tc := range asList(m.(map[string]any)["tool_calls"]) {
			args = append(args, tc.(map[string]any)["function"].(map[string]any)["arguments"].(string))
		}
	}
	// OpenAI's format: the text as the model wrote it.
	if want := []string{`{"path": "a"}`, `ls -l`}; !slices.Equal(args, want) || len(msgs) != 6 {
		t.Fatalf("openai-jsonl: %d messages, arguments %q; want 6 and %q", len(msgs), args, want)
	}

	// ShareGPT (LLaMA-Factory json.dumps the arguments): an object when
	// the text holds one, else the text.
	out, _, _ = run(t, ws, export.Options{Format: export.ShareGPT, Sessions: sel})
	conv := asList(lines(t, out)[0]["conversations"])
	var calls []any
	for _, turn := range conv {
		if turn := turn.(map[string]any); turn["from"] == "function_call" {
			var c map[string]any
			if err := json.Unmarshal([]byte(turn["value"].(string)), &c); err != nil {
				t.Fatalf("function_call value %q: %v", turn["value"], err)
			}
			calls = append(calls, c["arguments"])
		}
	}
	if want := []any{map[string]any{"path": "a"}, "ls -l"}; !reflect.DeepEqual(calls, want) || len(conv) != 6 {
		t.Fatalf("sharegpt: %d turns, arguments %v; want 6 and %v", len(conv), calls, want)
	}

	// ATIF: arguments is an object; other text goes to extra.raw_arguments.
	out, _, _ = run(t, ws, export.Options{Format: export.ATIF, Sessions: sel})
	var got []any
	raw := map[string]any{}
	for _, s := range asList(lines(t, out)[0]["steps"]) {
		s := s.(map[string]any)
		for _, tc := range asList(s["tool_calls"]) {
			got = append(got, tc.(map[string]any)["arguments"])
		}
		if x, ok := s["extra"].(map[string]any)["raw_arguments"].(map[string]any); ok {
			for k, v := range x {
				raw[k] = v
			}
		}
	}
	if want := []any{map[string]any{"path": "a"}, map[string]any{}}; !reflect.DeepEqual(got, want) || raw["c2"] != "ls -l" {
		t.Fatalf("atif: arguments %v, raw_arguments %v", got, raw)
	}
}

// Chat exports never drop messages silently: a trajectory whose record
// breaks the convention is skipped whole and named in the summary, raw
// records beside conventional ones are noted.
func TestChatExportNamesWhatItSkips(t *testing.T) {
	ws := shapesWorkspace(t)
	for _, format := range []string{export.OpenAIJSONL, export.ShareGPT} {
		out, sum, heads := run(t, ws, export.Options{Format: format})
		skipped := skippedNames(sum)
		if !strings.Contains(skipped["broken"], "wrong shape") || !strings.Contains(skipped["raw-only"], "raw records only") {
			t.Fatalf("%s: skipped %+v; want broken and raw-only named", format, sum.Skipped)
		}
		for _, n := range sum.Skipped {
			if n.Reason == skipped["broken"] && !strings.Contains(n.Example, `broken@2: step record: messages[0]: role "bot"`) {
				t.Fatalf("%s: the broken note does not say where: %+v", format, n)
			}
		}
		if n := len(lines(t, out)); int64(n) != sum.Trajectories || n+len(skipped) != len(shapes) || len(heads) != n {
			t.Fatalf("%s: %d lines, %d heads, summary %+v: each of the %d sessions must be written or skipped", format, n, len(heads), sum, len(shapes))
		}
		var leftOut bool
		for _, n := range sum.LeftOut {
			leftOut = leftOut || (slices.Contains(n.Names, "raw-beside") && strings.Contains(n.Reason, "raw records"))
		}
		if !leftOut {
			t.Fatalf("%s: raw-beside's raw record is not noted: %+v", format, sum.LeftOut)
		}
	}
	// The formats with room for raw records carry the broken one, noted.
	for _, format := range []string{export.ATIF} {
		_, sum, heads := run(t, ws, export.Options{Format: format})
		if len(heads) != len(shapes) || len(sum.Skipped) != 0 || len(sum.LeftOut) != 1 || sum.LeftOut[0].Names[0] != "broken" {
			t.Fatalf("%s: exported %v, summary %+v", format, headNames(heads), sum)
		}
	}
}

// ShareGPT lines pass LLaMA-Factory's SharegptDatasetConverter rule
// (strict human/observation, gpt/function_call alternation) for every
// record shape the test corpus holds; parallel calls are one
// function_call turn holding a list, their results one observation.
func TestShareGPTLlamaFactoryAlternation(t *testing.T) {
	ws := shapesWorkspace(t)
	fillForked(t, ws)
	out, sum, _ := run(t, ws, export.Options{Format: export.ShareGPT, Branches: export.All})
	got := byID(t, out, "id")
	for id, o := range got {
		if err := export.LlamaFactoryShareGPTError(asList(o["conversations"])); err != nil {
			t.Errorf("%s: LLaMA-Factory would skip it: %v\n%v", id, err, o["conversations"])
		}
	}
	turns := func(id string) (froms, values []string) {
		for _, turn := range asList(got[id]["conversations"]) {
			turn := turn.(map[string]any)
			froms = append(froms, turn["from"].(string))
			values = append(values, turn["value"].(string))
		}
		return froms, values
	}
	froms, values := turns("parallel")
	if want := []string{"system", "human", "function_call", "observation", "gpt"}; !slices.Equal(froms, want) {
		t.Fatalf("parallel: turns %v, want %v", froms, want)
	}
	var calls []map[string]any
	var results []string
	if json.Unmarshal([]byte(values[2]), &calls) != nil || len(calls) != 2 || calls[1]["arguments"].(map[string]any)["city"] != "Rome" ||
		json.Unmarshal([]byte(values[3]), &results) != nil || !slices.Equal(results, []string{"3C", "18C"}) {
		t.Fatalf("parallel: function_call %s, observation %s", values[2], values[3])
	}
	froms, values = turns("merged-turns")
	if want := []string{"human", "gpt", "human", "function_call", "observation", "gpt"}; !slices.Equal(froms, want) ||
		values[0] != "one\n\ntwo" || values[1] != "a\n\nb" || values[2] != "late rule\n\nthree" || values[4] != "r\n\nand?" {
		t.Fatalf("merged-turns: %q %q", froms, values)
	}
	if froms, _ = turns("trailing-user"); !slices.Equal(froms, []string{"human", "gpt"}) {
		t.Fatalf("trailing-user: %v", froms)
	}
	if !strings.Contains(skippedNames(sum)["assistant-first"], "starts with the assistant") {
		t.Fatalf("assistant-first not skipped with its reason: %+v", sum.Skipped)
	}
	noted := map[string][]string{}
	for _, n := range sum.LeftOut {
		for _, s := range n.Names {
			noted[s] = append(noted[s], n.Reason)
		}
	}
	for _, s := range []string{"text-beside-calls", "trailing-user", "raw-beside"} {
		if len(noted[s]) != 1 {
			t.Errorf("%s: left-out notes %q, want one", s, noted[s])
		}
	}
	var names []string
	for id := range got {
		names = append(names, id)
	}
	sort.Strings(names)
	n := len(names)
	for _, sk := range sum.Skipped {
		n += int(sk.Sessions)
	}
	if n != len(shapes)+6 || !strings.Contains(skippedNames(sum)["c"], "no assistant turn") {
		t.Fatalf("written %v, skipped %+v: want every one of %d sessions written or skipped", names, sum.Skipped, len(shapes)+6)
	}
}
