package export_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/cairnlog/cairn"
)

// rec marshals a step record of the convention.
func rec(t testing.TB, r cairn.Record) cairn.CommitOptions {
	t.Helper()
	b, err := cairn.MarshalRecord(&r)
	if err != nil {
		t.Fatal(err)
	}
	return cairn.CommitOptions{Record: b}
}

func f64(v float64) *float64 { return &v }

// agentRun commits a small tool-using agent run of steps steps to
// session name: a system and user message, then tool calls and results,
// then a final answer carrying outcome.
func agentRun(ctx context.Context, t testing.TB, ws *cairn.Workspace, name string, steps int, outcome string, labels map[string]string) *cairn.Step {
	t.Helper()
	s, err := ws.Session(name)
	if err != nil {
		t.Fatal(err)
	}
	var last *cairn.Step
	for i := 1; i <= steps; i++ {
		var r cairn.Record
		switch {
		case i == 1:
			r = cairn.Record{Messages: []cairn.Message{
				{Role: "system", Content: "You are a careful agent."},
				{Role: "user", Content: "task for " + name},
			}, Agent: &cairn.Agent{Name: "toy-agent", Version: "0.1"}, Labels: labels,
				Tools: []json.RawMessage{json.RawMessage(`{"type":"function","function":{"name":"read","parameters":{"type":"object"}}}`)}}
		case i == steps:
			r = cairn.Record{Messages: []cairn.Message{{Role: "assistant", Content: fmt.Sprintf("answer of %s", name)}},
				Model: "m-1", Tokens: &cairn.Tokens{Prompt: 100, Completion: 7}, CostUSD: f64(0.002), Outcome: outcome}
		default:
			id := fmt.Sprintf("call-%s-%d", name, i)
			r = cairn.Record{Messages: []cairn.Message{
				{Role: "assistant", Content: "", ToolCalls: []cairn.ToolCall{{ID: id, Name: "read", Arguments: json.RawMessage(fmt.Sprintf(`{"page":%d}`, i))}}},
				{Role: "tool", ToolCallID: id, Content: fmt.Sprintf("page %d text", i)},
			}, Model: "m-1", Tokens: &cairn.Tokens{Prompt: 50 * int64(i), Completion: 5, Cached: 10}, CostUSD: f64(0.001), LatencyMS: f64(120)}
		}
		doc := fmt.Sprintf(`{"session":%q,"step":%d,"notes":["n%d"]}`, name, i, i)
		if last, err = s.Commit(ctx, cairn.JSON([]byte(doc)), rec(t, r)); err != nil {
			t.Fatal(err)
		}
	}
	return last
}

// continueRun commits more steps to a (forked) session, the last one
// ending with outcome or reward.
func continueRun(ctx context.Context, t testing.TB, ws *cairn.Workspace, name string, steps int, outcome string, reward *float64) *cairn.Step {
	t.Helper()
	s, err := ws.Session(name)
	if err != nil {
		t.Fatal(err)
	}
	var last *cairn.Step
	for i := 1; i <= steps; i++ {
		r := cairn.Record{Messages: []cairn.Message{{Role: "assistant", Content: fmt.Sprintf("%s says %d", name, i)}}}
		if i == steps {
			r.Outcome, r.Reward = outcome, reward
		}
		if last, err = s.Commit(ctx, cairn.JSON([]byte(fmt.Sprintf(`{"s":%q,"i":%d}`, name, i))), rec(t, r)); err != nil {
			t.Fatal(err)
		}
	}
	return last
}

func fork(ctx context.Context, t testing.TB, ws *cairn.Workspace, ref, to string) {
	t.Helper()
	st, err := ws.Resolve(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Fork(ctx, st, to); err != nil {
		t.Fatal(err)
	}
}

// emptyStore opens a workspace on an empty local store.
func emptyStore(t testing.TB) *cairn.Workspace {
	t.Helper()
	ws, err := cairn.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

// commitRecords commits one step per record, given as JSON text, to
// session name.
func commitRecords(t testing.TB, ws *cairn.Workspace, name string, records ...string) {
	t.Helper()
	s, err := ws.Session(name)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range records {
		if _, err := s.Commit(context.Background(), cairn.JSON([]byte(`{}`)), cairn.CommitOptions{Record: json.RawMessage(r)}); err != nil {
			t.Fatalf("%s step %d: %v", name, i+1, err)
		}
	}
}
