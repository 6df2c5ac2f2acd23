package main

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// commitAdapterFixture commits the steps of one of export's adapter
// fixtures (a LangGraph thread, an ADK session, as their adapters wrote
// them) through the CLI, forking where a session's first step names a
// step of another session; it returns the sessions in order.
func commitAdapterFixture(t *testing.T, store, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sessions []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		var st struct {
			Session string          `json:"session"`
			Parent  string          `json:"parent"`
			Record  json.RawMessage `json:"record"`
			State   json.RawMessage `json:"state"`
		}
		if err := json.Unmarshal(sc.Bytes(), &st); err != nil {
			t.Fatal(err)
		}
		if len(sessions) == 0 || sessions[len(sessions)-1] != st.Session {
			sessions = append(sessions, st.Session)
		}
		if st.Parent != "" && !strings.HasPrefix(st.Parent, st.Session+"@") {
			if _, errs, code := cli(t, store, "", "fork", st.Parent, st.Session); code != 0 {
				t.Fatalf("fork %s %s: %s", st.Parent, st.Session, errs)
			}
		}
		commitWith(t, store, st.Session, string(st.State), "-", "--record", string(st.Record))
	}
	return sessions
}

// TestReplayAdapterConversation: a LangGraph thread's checkpoints hold
// its conversation in their state, and their records only say what a
// step is; replay reads each step's messages from the state, as export
// does, and shows them in words beside the time-travel fork's own.
func TestReplayAdapterConversation(t *testing.T) {
	store := t.TempDir()
	sessions := commitAdapterFixture(t, store, "../../internal/export/testdata/langgraph/thread.jsonl")
	if len(sessions) != 2 {
		t.Fatalf("fixture sessions %v, want a thread and its fork", sessions)
	}
	out, errs, code := cli(t, store, "", "replay", sessions[1])
	if code != 0 {
		t.Fatalf("replay: exit %d: %s", code, errs)
	}
	checkLines(t, "replay of a LangGraph fork", out, []string{
		"  system: be brief", "  user: what is in a.txt?",
		"  assistant calls read({\"path\":\"a.txt\"})", "(model gpt-x, tokens 100 in, 7 out)",
		"  tool read: hello",
		"(fork of ", "  assistant: it says hello",
		"  user: fork question", "  assistant calls read(", "  tool read: hello", "  assistant: it says hello",
	})
	// The steps that add no message keep showing their record.
	if !strings.Contains(out, `record: {"langgraph":"writes"`) {
		t.Errorf("replay hides the records of steps that add no message:\n%s", out)
	}
}

// TestReplayAdapterJSON: --json gives an adapter step's messages beside
// its record, for a script as for a person.
func TestReplayAdapterJSON(t *testing.T) {
	store := t.TempDir()
	sessions := commitAdapterFixture(t, store, "../../internal/export/testdata/langgraph/thread.jsonl")
	out, errs, code := cli(t, store, "", "replay", sessions[0], "--json")
	if code != 0 {
		t.Fatalf("replay --json: exit %d: %s", code, errs)
	}
	var said []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var line struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatal(err)
		}
		for _, m := range line.Messages {
			said = append(said, m.Role+": "+m.Content)
		}
	}
	if len(said) < 3 || said[0] != "system: be brief" || said[1] != "user: what is in a.txt?" {
		t.Fatalf("replay --json messages %q, want the thread's conversation from its start", said)
	}
}
