package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestNullOptionalArgumentIsLeftOut: LLM clients send null for an
// optional argument they do not mean to give. checkpoint took it as left
// out (expect, status, record, idempotency_key: null), as the HTTP API
// takes "step": null on a fork, but the other tools refused it ("step:
// want an integer >= 1 ..., not null (leave it out if it is optional)"),
// so ask_for_approval refused the idempotency_key: null that checkpoint
// took. Every tool takes null for an optional argument as left out now;
// a required one is still refused.
func TestNullOptionalArgumentIsLeftOut(t *testing.T) {
	ws := cairn.OpenStore(mem.New())
	s, _ := ws.Session("s")
	for _, doc := range []string{`{"n":1}`, `{"n":2}`} {
		if _, err := s.Commit(t.Context(), cairn.JSON([]byte(doc)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cs := connect(t, ws)
	var rs ResumeOut
	call(t, cs, ToolResume, json.RawMessage(`{"session":"s","step":null}`), &rs, false)
	if rs.Step != 2 || rs.StateJSON != `{"n":2}` {
		t.Errorf("resume with step null: %+v; want the newest step, 2", rs)
	}
	if text := call(t, cs, ToolShow, json.RawMessage(`{"ref":"s@1","record_only":null}`), nil, false); !strings.Contains(text, `{\"n\":1}`) {
		t.Errorf("show with record_only null: %s; want the state", text)
	}
	if text := call(t, cs, ToolLog, json.RawMessage(`{"ref":"s","limit":null}`), nil, false); !strings.Contains(text, `"step":1`) {
		t.Errorf("log with limit null: %s; want every step", text)
	}
	if text := call(t, cs, ToolAsk, json.RawMessage(`{"session":"s","question":"go on?","details":null,"idempotency_key":null}`), nil, false); !strings.Contains(text, `"awaiting_input"`) {
		t.Errorf("ask_for_approval with idempotency_key null: %s; want the question asked", text)
	}
	text := call(t, cs, ToolDiff, json.RawMessage(`{"a":"s@1","b":null}`), nil, true)
	if !strings.Contains(text, "b: want a string") || strings.Contains(text, "optional") {
		t.Errorf("diff with b, which it requires, null: %q; want it refused as required", text)
	}
}
