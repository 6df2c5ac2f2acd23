package main

import (
	"bufio"
	"encoding/json"
	"fmt"
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

// TestReplayFromOnAdapterSession: replay --from K of a LangGraph thread
// read the conversation from the thread's first step whatever K was, so
// a trim below K (a node that drops old messages, as summarising agents
// do, which export takes for the end of one conversation) hid the
// messages of every step from K on: they showed as bare records. As for
// any session, --from K reads the history from step K-1 up: the output
// starts at step K, with the messages each step added.
func TestReplayFromOnAdapterSession(t *testing.T) {
	store := t.TempDir()
	msg := func(i int) string {
		return fmt.Sprintf(`{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{"content":"message %d","id":"m%d"}}`, i, i)
	}
	for step, kept := range [][]int{{1}, {1, 2}, {2}, {2, 3}, {2, 3, 4}} {
		var list []string
		for _, i := range kept {
			list = append(list, msg(i))
		}
		state := fmt.Sprintf(`{"checkpoint_id":"c%d","channels":{"messages":{"version":%d,"value":{"json":[%s]}}}}`, step+1, step+1, strings.Join(list, ","))
		commitWith(t, store, "thread", state, "-", "--record", fmt.Sprintf(`{"langgraph":"checkpoint","checkpoint_id":"c%d","writes":0}`, step+1))
	}
	out, errs, code := cli(t, store, "", "replay", "thread", "--from", "4")
	if code != 0 {
		t.Fatalf("replay --from 4: exit %d: %s", code, errs)
	}
	if !strings.HasPrefix(out, "thread@4 ") {
		t.Errorf("replay --from 4 does not start at step 4:\n%s", out)
	}
	checkLines(t, "replay --from 4 of a trimmed LangGraph thread", out, []string{
		"thread@4 ", "  user: message 3", "thread@5 ", "  user: message 4",
	})
	if strings.Contains(out, "record:") || strings.Contains(out, "message 2") {
		t.Errorf("replay --from 4 shows records, or messages of steps before 4:\n%s", out)
	}
}
