package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/internal/hitl"
)

// TestCheckpointIdempotencyKey: an agent that calls checkpoint again with
// the same idempotency_key (its first call's answer lost) gets the step
// the first call wrote, marked replayed, and the session holds it once;
// the key on another step, or a key no step could hold, is an error in
// words.
func TestCheckpointIdempotencyKey(t *testing.T) {
	cs := connect(t, cairn.OpenStore(mem.New()))
	args := map[string]any{"session": "a", "state_json": `{"n":1}`, "expect": 0, "idempotency_key": "agent-7/turn-1"}
	var first, again CheckpointOut
	call(t, cs, ToolCheckpoint, args, &first, false)
	call(t, cs, ToolCheckpoint, args, &again, false)
	if first.Replayed || !again.Replayed || again.Step != 1 || again.ID != first.ID {
		t.Fatalf("first %+v, again %+v; want step 1 once, the second replayed", first, again)
	}
	var r ResumeOut
	call(t, cs, ToolResume, map[string]any{"session": "a"}, &r, false)
	if r.Step != 1 {
		t.Errorf("the session's head is step %d, want 1", r.Step)
	}
	msg := call(t, cs, ToolCheckpoint, map[string]any{"session": "a", "state_json": `{"n":2}`, "idempotency_key": "agent-7/turn-1"}, nil, true)
	if !strings.Contains(msg, `idempotency key "agent-7/turn-1" was already used for step 1`) {
		t.Errorf("key used for another step: %q", msg)
	}
	msg = call(t, cs, ToolCheckpoint, map[string]any{"session": "a", "state_json": `{}`, "idempotency_key": "two words"}, nil, true)
	if !strings.Contains(msg, "idempotency_key") || !strings.Contains(msg, "printable ASCII") {
		t.Errorf("bad key: %q", msg)
	}
}

// TestAskIdempotencyKey: an agent whose ask_for_approval answer was lost
// and that asks again with the same idempotency_key (from the same
// server, or from a fresh one, as a restarted agent would) gets the
// question the first call asked, marked replayed, and the session holds
// it once; the key with another question or details, or on a step that
// is no question, is a conflict in words; without a key, asking again is
// refused as before.
func TestAskIdempotencyKey(t *testing.T) {
	store := mem.New()
	cs := connect(t, cairn.OpenStore(store))
	call(t, cs, ToolCheckpoint, map[string]any{"session": "a", "state_json": `{"n":1}`}, nil, false)
	ask := map[string]any{"session": "a", "question": "deploy?", "details": map[string]any{"env": "prod"}, "idempotency_key": "agent-7/ask-1"}
	var first, again, fresh AskOut
	call(t, cs, ToolAsk, ask, &first, false)
	call(t, cs, ToolAsk, ask, &again, false)
	call(t, connect(t, cairn.OpenStore(store)), ToolAsk, ask, &fresh, false)
	if first.Replayed || first.Step != 2 || first.Status != "awaiting_input" {
		t.Fatalf("first ask %+v; want step 2 awaiting input, not replayed", first)
	}
	for _, got := range []AskOut{again, fresh} {
		if !got.Replayed || got.Step != 2 || got.ID != first.ID {
			t.Errorf("retry %+v; want step 2 (%s) replayed", got, first.ID)
		}
	}
	var r ResumeOut
	call(t, cs, ToolResume, map[string]any{"session": "a"}, &r, false)
	if r.Step != 2 || !r.AwaitingInput {
		t.Errorf("the session's head is step %d (awaiting input %v), want 2 awaiting input", r.Step, r.AwaitingInput)
	}
	for name, args := range map[string]map[string]any{
		"another question": {"session": "a", "question": "deploy to staging?", "details": map[string]any{"env": "prod"}, "idempotency_key": "agent-7/ask-1"},
		"other details":    {"session": "a", "question": "deploy?", "idempotency_key": "agent-7/ask-1"},
	} {
		want := `idempotency key "agent-7/ask-1" was already used for step 2`
		if msg := call(t, cs, ToolAsk, args, nil, true); !strings.Contains(msg, want) {
			t.Errorf("%s: %q, want it to say %q", name, msg, want)
		}
	}
	if msg := call(t, cs, ToolAsk, map[string]any{"session": "a", "question": "deploy?"}, nil, true); !strings.Contains(msg, "a@2 awaits input") {
		t.Errorf("asking again without a key: %q", msg)
	}
	if msg := call(t, cs, ToolAsk, map[string]any{"session": "a", "question": "deploy?", "idempotency_key": "two words"}, nil, true); !strings.Contains(msg, "idempotency_key") || !strings.Contains(msg, "printable ASCII") {
		t.Errorf("bad key: %q", msg)
	}
	var log LogOut
	call(t, cs, ToolLog, map[string]any{"ref": "a"}, &log, false)
	if len(log.Steps) != 2 {
		t.Errorf("the session holds %d steps, want 2", len(log.Steps))
	}
	// The key of a checkpoint at the head (a first step, or one with a
	// parent) is no question's.
	call(t, cs, ToolCheckpoint, map[string]any{"session": "b", "state_json": `{"n":1}`, "idempotency_key": "b-1"}, nil, false)
	if msg := call(t, cs, ToolAsk, map[string]any{"session": "b", "question": "deploy?", "idempotency_key": "b-1"}, nil, true); !strings.Contains(msg, `idempotency key "b-1" was already used for step 1`) {
		t.Errorf("the key of a first step: %q", msg)
	}
	call(t, cs, ToolCheckpoint, map[string]any{"session": "b", "state_json": `{"n":2}`, "idempotency_key": "b-2"}, nil, false)
	if msg := call(t, cs, ToolAsk, map[string]any{"session": "b", "question": "deploy?", "idempotency_key": "b-2"}, nil, true); !strings.Contains(msg, `idempotency key "b-2" was already used for step 2`) {
		t.Errorf("the key of a checkpoint: %q", msg)
	}
}

// TestAskRetriedAfterReply: an agent whose ask_for_approval answer was
// lost (it crashed after sending the call), and whose question a human
// answered meanwhile, called again with the same idempotency_key and was
// asked again: a second question above the reply, and the human's answer
// never reached it. The retry is now answered with the question the first
// call asked, replayed, and the human's answer, exactly as sent; nothing
// is written. The key with another question is still a conflict; without
// a key, asking once the question was answered asks a new one.
func TestAskRetriedAfterReply(t *testing.T) {
	ctx := t.Context()
	store := mem.New()
	ws := cairn.OpenStore(store)
	cs := connect(t, ws)
	call(t, cs, ToolCheckpoint, map[string]any{"session": "a", "state_json": `{"n":1}`}, nil, false)
	ask := map[string]any{"session": "a", "question": "deploy?", "details": map[string]any{"env": "prod"}, "idempotency_key": "agent-7/ask-1"}
	var first AskOut
	call(t, cs, ToolAsk, ask, &first, false)
	// The human answers, as cairn reply does, from another process.
	human, err := cairn.OpenStore(store).Session("a")
	if err != nil {
		t.Fatal(err)
	}
	answer := `{"approved":true,"ticket":12345678901234567891}`
	if _, err := hitl.ReplyWith(ctx, human, json.RawMessage(answer), hitl.ReplyOptions{Question: cairn.ExpectHead(first.Step)}); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*mcp.ClientSession{"the same server": cs, "a fresh server": connect(t, cairn.OpenStore(store))} {
		res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: ToolAsk, Arguments: ask})
		if err != nil || res.IsError {
			t.Fatalf("%s: retry: %v %+v", name, err, res)
		}
		b := []byte(res.Content[0].(*mcp.TextContent).Text) // the answer's JSON as sent
		var again AskOut
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatal(err)
		}
		if !again.Replayed || again.Step != first.Step || again.ID != first.ID || again.ReplyStep != first.Step+1 {
			t.Errorf("%s: retry %s; want step %d (%s) replayed, answered at step %d", name, b, first.Step, first.ID, first.Step+1)
		}
		if !strings.Contains(string(b), `"reply":`+answer) || !strings.Contains(again.Next, "a human answered a@2") {
			t.Errorf("%s: retry %s; want the human's answer %s", name, b, answer)
		}
	}
	var log LogOut
	call(t, cs, ToolLog, map[string]any{"ref": "a"}, &log, false)
	if len(log.Steps) != 3 || log.Steps[0].Status != "running" {
		t.Fatalf("the session holds %d steps, the head %s; want 3, the reply at the head", len(log.Steps), log.Steps[0].Status)
	}
	other := map[string]any{"session": "a", "question": "deploy to staging?", "details": map[string]any{"env": "prod"}, "idempotency_key": "agent-7/ask-1"}
	if msg := call(t, cs, ToolAsk, other, nil, true); !strings.Contains(msg, `idempotency key "agent-7/ask-1" was already used for step 2`) {
		t.Errorf("the key with another question after the reply: %q", msg)
	}
	var fresh AskOut
	call(t, cs, ToolAsk, map[string]any{"session": "a", "question": "deploy?", "details": map[string]any{"env": "prod"}}, &fresh, false)
	if fresh.Replayed || fresh.Step != 4 || fresh.Reply != nil {
		t.Errorf("asking without a key once answered: %+v; want a new question at step 4", fresh)
	}
}
