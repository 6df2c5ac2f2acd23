package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

// TestParseRecordSaysWhatIsWrong: a record field of the wrong kind is
// named in the convention's words (the field's path, what it wants and
// what it got), never in Go's ("Go struct field Record.reward of type
// float64").
func TestParseRecordSaysWhatIsWrong(t *testing.T) {
	for in, want := range map[string]string{
		`{"reward":1e400}`:                                       "step record: reward: 1e400 is out of range",
		`{"reward":"high"}`:                                      "step record: reward: want a number, got a string",
		`{"cost_usd":[1]}`:                                       "step record: cost_usd: want a number, got an array",
		`{"latency_ms":-1e999}`:                                  "step record: latency_ms: -1e999 is out of range",
		`{"labels":1}`:                                           "step record: labels: want an object of strings, got a number",
		`{"labels":{"a":1}}`:                                     `step record: labels["a"]: want a string, got a number`,
		`{"labels":{"a":{"b":"c"}}}`:                             `step record: labels["a"]: want a string, got an object`,
		`{"model":true}`:                                         "step record: model: want a string, got a boolean",
		`{"outcome":{}}`:                                         "step record: outcome: want a string, got an object",
		`{"tools":"all"}`:                                        "step record: tools: want an array, got a string",
		`{"agent":"me"}`:                                         "step record: agent: want an object, got a string",
		`{"agent":{"name":7}}`:                                   "step record: agent.name: want a string, got a number",
		`{"agent":{"name":"a","version":1}}`:                     "step record: agent.version: want a string, got a number",
		`{"tokens":5}`:                                           "step record: tokens: want an object, got a number",
		`{"tokens":{"prompt":"many"}}`:                           "step record: tokens.prompt: want a whole number, got a string",
		`{"tokens":{"completion":1.5}}`:                          "step record: tokens.completion: want a whole number, got 1.5",
		`{"tokens":{"cached":1e30}}`:                             "step record: tokens.cached: 1e30 is out of range",
		`{"messages":"hi"}`:                                      "step record: messages: want an array of messages, got a string",
		`{"messages":[{"role":"user"},3]}`:                       "step record: messages[1]: want a message object, got a number",
		`{"messages":[{"role":1}]}`:                              "step record: messages[0].role: want a string, got a number",
		`{"messages":[{"role":"user","content":[1]}]}`:           "step record: messages[0].content: want a string, got an array",
		`{"messages":[{"role":"user","reasoning":2}]}`:           "step record: messages[0].reasoning: want a string, got a number",
		`{"messages":[{"role":"tool","tool_call_id":2}]}`:        "step record: messages[0].tool_call_id: want a string, got a number",
		`{"messages":[{"role":"tool","name":false}]}`:            "step record: messages[0].name: want a string, got a boolean",
		`{"messages":[{"role":"assistant","tool_calls":{}}]}`:    "step record: messages[0].tool_calls: want an array of tool calls, got an object",
		`{"messages":[{"role":"assistant","tool_calls":["x"]}]}`: "step record: messages[0].tool_calls[0]: want a tool call object, got a string",
		`{"messages":[{"role":"assistant","tool_calls":[{"id":1,"name":"ls"}]}]}`:    "step record: messages[0].tool_calls[0].id: want a string, got a number",
		`{"messages":[{},{"role":"assistant","tool_calls":[{"id":"1","name":[]}]}]}`: "step record: messages[1].tool_calls[0].name: want a string, got an array",
		// A key given twice: encoding/json refuses the first value, the
		// walk sees the second.
		`{"reward":"high","reward":1}`: "step record: reward: string of the wrong kind",
	} {
		_, err := cairn.ParseRecord([]byte(in))
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", in, err, want)
			continue
		}
		for _, goWords := range []string{"Go struct", "unmarshal", "float64", "int64", "map[", "cairn."} {
			if strings.Contains(err.Error(), goWords) {
				t.Errorf("%s: %v speaks Go (%q)", in, err, goWords)
			}
		}
	}
	// null is no value, as before: accepted for every field.
	if _, err := cairn.ParseRecord([]byte(`{"reward":null,"labels":{"a":null},"tokens":{"prompt":null},"messages":[{"role":"user","content":null}]}`)); err != nil {
		t.Errorf("nulls: %v", err)
	}
}

// TestRemovedSessionReadsAsRemoved: after Remove, every read of the
// session says it was removed: its head (through Session.Head and
// Workspace.ReadHead, which returned the tombstone as a step) and each of
// its old steps (which said "pruned").
func TestRemovedSessionReadsAsRemoved(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	s, err := ws.Session("gone")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := s.Commit(ctx, cairn.JSON(fmt.Appendf(nil, `{"i":%d}`, i)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ws.Remove(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	removed := func(what string, st *cairn.Step, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s = %v (%s), want an error saying the session was removed", what, st, st.Record)
			return
		}
		if !errors.Is(err, cairn.ErrNotFound) || !errors.Is(err, cairn.ErrRemoved) || !strings.Contains(err.Error(), "was removed") || strings.Contains(err.Error(), "pruned") {
			t.Errorf("%s: %v, want ErrNotFound and ErrRemoved saying the session was removed", what, err)
		}
	}
	st, err := ws.ReadHead(ctx, "gone")
	removed("ReadHead", st, err)
	st, err = s.Head(ctx)
	removed("Head", st, err)
	for _, ref := range []string{"gone", "gone@1", "gone@3", "gone@4", "gone@9"} {
		st, err = ws.Resolve(ctx, ref)
		removed("Resolve "+ref, st, err)
	}
	st, err = s.Step(ctx, 2)
	removed("Step 2", st, err)

	// A session pruned, not removed, still says pruned; one never
	// written says it has no steps.
	p, _ := ws.Session("kept")
	for i := range 3 {
		if _, err := p.Commit(ctx, cairn.JSON(fmt.Appendf(nil, `{"i":%d}`, i)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ws.Prune(ctx, "kept", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Step(ctx, 1); err == nil || !strings.Contains(err.Error(), "pruned") || errors.Is(err, cairn.ErrRemoved) {
		t.Errorf("pruned step: %v, want pruned", err)
	}
	if _, err := ws.ReadHead(ctx, "never"); err == nil || errors.Is(err, cairn.ErrRemoved) || !errors.Is(err, cairn.ErrNotFound) {
		t.Errorf("ReadHead of a session never written: %v", err)
	}
}

// TestPatchStoredNotUTF8: a head stored with bytes that are not UTF-8
// (as commits before the UTF-8 check stored them; planted here below the
// Go API, which now refuses them) loads unchecked for a patch, by a
// writer that then holds it and by a fresh one; a patch whose own text
// is not UTF-8 is refused before anything is applied, and nothing is
// committed.
func TestPatchStoredNotUTF8(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	if _, err := manifest.NewRepo(store, 0).Commit(ctx, nil, nil, manifest.CommitInput{
		Session: "old",
		Build: func(sink tree.Sink, _ func(cas.ID) bool) (manifest.StateKind, tree.Ref, error) {
			ref, err := tree.BuildJSON([]byte("{\"a\":\"caf\xe9\"}"), sink)
			return manifest.StateJSON, ref, err
		},
	}); err != nil {
		t.Fatal(err)
	}
	ws := cairn.OpenStore(store)
	s, _ := ws.Session("old")
	if _, err := s.Commit(ctx, cairn.Patch([]byte(`[{"op":"add","path":"/b","value":1}]`)), cairn.CommitOptions{}); err != nil {
		t.Fatalf("patch of a held head that is not UTF-8: %v", err)
	}
	fresh, _ := cairn.OpenStore(store).Session("old")
	st, err := fresh.Commit(ctx, cairn.Patch([]byte(`[{"op":"add","path":"/c","value":2}]`)), cairn.CommitOptions{})
	if err != nil {
		t.Fatalf("patch of a stored head that is not UTF-8: %v", err)
	}
	if doc, err := st.JSON(ctx); err != nil || string(doc) != "{\"a\":\"caf\xe9\",\"b\":1,\"c\":2}" {
		t.Fatalf("patched document = %q, %v", doc, err)
	}
	for _, ops := range []string{
		"[{\"op\":\"add\",\"path\":\"/d\",\"value\":\"\xff\"}]",
		"[{\"op\":\"add\",\"path\":\"/\xc3\",\"value\":1}]",
		"[{\"op\":\"add\",\"path\":\"/e\",\"value\":1},{\"op\":\"add\",\"path\":\"/f\",\"value\":{\"k\":\"\xed\xa0\x80\"}}]",
	} {
		for _, w := range []*cairn.Session{s, fresh} {
			_, err := w.Commit(ctx, cairn.Patch([]byte(ops)), cairn.CommitOptions{})
			if !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), "patch: not UTF-8") {
				t.Errorf("patch %q: %v, want ErrInvalid saying the patch is not UTF-8", ops, err)
			}
		}
	}
	if h, err := ws.ReadHead(ctx, "old"); err != nil || h.Number != 3 {
		t.Fatalf("head after refused patches = %v, %v; want old@3", h, err)
	}
}

// TestCommitTooDeepSaysSo: a state nested deeper than a state may hold
// is valid JSON: the refusal says how deep is too deep, not "invalid
// JSON", on the first commit and on a later one.
func TestCommitTooDeepSaysSo(t *testing.T) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ws.Session("deep")
	deep := []byte(`{"a":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`)
	for i, doc := range [][]byte{deep, []byte(`{"a":1}`), deep} {
		_, err := s.Commit(ctx, cairn.JSON(doc), cairn.CommitOptions{})
		if i == 1 {
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		if !errors.Is(err, cairn.ErrInvalid) || strings.Contains(err.Error(), "invalid JSON") || !strings.Contains(err.Error(), "512 levels") {
			t.Errorf("commit %d of a 601-deep state: %v; want ErrInvalid saying the nesting limit", i+1, err)
		}
	}
}
