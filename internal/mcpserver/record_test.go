package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/internal/hitl"
)

// TestRecordsComeBackAsStored: a record goes back from show, resume and
// log as it was stored (its keys in their order, its numbers as
// written), and ask_for_approval stores its details as sent. The SDK's
// typed tools round-trip arguments and results through map[string]any:
// keys came back sorted and 12345678901234567891 as
// 12345678901234567000, in what an agent resumes from and in the
// details a human decides on.
func TestRecordsComeBackAsStored(t *testing.T) {
	ws := cairn.OpenStore(mem.New())
	cs := connect(t, ws)
	const rec = `{"z":1,"a":12345678901234567891,"f":1.10}`
	call(t, cs, ToolCheckpoint, map[string]any{"session": "s", "state_json": `{}`, "record": rawJSON(rec)}, nil, false)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{ToolShow, map[string]any{"ref": "s"}},
		{ToolShow, map[string]any{"ref": "s@1", "record_only": true}},
		{ToolResume, map[string]any{"session": "s"}},
		{ToolLog, map[string]any{"ref": "s"}},
	} {
		if text := call(t, cs, c.tool, c.args, nil, false); !strings.Contains(text, `"record":`+rec) {
			t.Errorf("%s %v: %s; want the record %s as stored", c.tool, c.args, text, rec)
		}
	}

	const details = `{"id":12345678901234567891,"amount":"1.10","env":"prod"}`
	call(t, cs, ToolAsk, map[string]any{"session": "s", "question": "pay?", "details": rawJSON(details)}, nil, false)
	st, err := mustSession(t, ws, "s").Head(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"question":"pay?","details":` + details + `}`; string(st.Record) != want {
		t.Errorf("ask stored %s; want %s", st.Record, want)
	}
	if _, err := hitl.Reply(t.Context(), mustSession(t, ws, "s"), json.RawMessage(`{"ok":true,"n":12345678901234567891}`)); err != nil {
		t.Fatal(err)
	}
	ws.Forget(mustSession(t, ws, "s"))
	if text := call(t, cs, ToolResume, map[string]any{"session": "s"}, nil, false); !strings.Contains(text, `"reply":{"ok":true,"n":12345678901234567891}`) {
		t.Errorf("resume after the reply: %s; want the reply as sent", text)
	}
}

type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }

func mustSession(t *testing.T, ws *cairn.Workspace, name string) *cairn.Session {
	t.Helper()
	s, err := ws.Session(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
