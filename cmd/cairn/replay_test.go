package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// commitWith commits stdin to session s with extra flags, failing the
// test on any error.
func commitWith(t *testing.T, store, s, stdin string, flags ...string) {
	t.Helper()
	args := append([]string{"commit", s}, flags...)
	if _, errs, code := cli(t, store, stdin, args...); code != 0 {
		t.Fatalf("cairn %q: exit %d: %s", args, code, errs)
	}
}

// TestReplayConversationAndFork replays a tool-calling conversation and
// a fork of it oldest first: each step's messages in words, the tool
// call and its result, and the state's changes beside the step before.
func TestReplayConversationAndFork(t *testing.T) {
	store := t.TempDir()
	commitWith(t, store, "chat", `{"messages":[]}`, "-", "--record",
		`{"messages":[{"role":"system","content":"You are helpful."},{"role":"user","content":"Weather in Paris?"}]}`)
	commitWith(t, store, "chat", `[{"op":"add","path":"/messages/-","value":"call"}]`, "--patch", "-", "--record",
		`{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"get_weather","arguments":{"city":"Paris"}}]}],"model":"m1","tokens":{"prompt":120,"completion":14}}`)
	commitWith(t, store, "chat", `[{"op":"add","path":"/messages/-","value":"result"}]`, "--patch", "-", "--record",
		`{"messages":[{"role":"tool","tool_call_id":"c1","name":"get_weather","content":"12 C"}]}`)
	commitWith(t, store, "chat", `[{"op":"replace","path":"/messages/1","value":"answer"}]`, "--patch", "-", "--status", "done", "--record",
		`{"messages":[{"role":"assistant","content":"It is 12 C.\nBring a coat."}],"outcome":"success"}`)
	if _, errs, code := cli(t, store, "", "fork", "chat@2", "alt"); code != 0 {
		t.Fatal(errs)
	}
	commitWith(t, store, "alt", `[{"op":"add","path":"/messages/-","value":"timeout"}]`, "--patch", "-", "--record", `{"note":"not the convention"}`)

	out, errs, code := cli(t, store, "", "replay", "chat")
	if code != 0 {
		t.Fatalf("replay chat: exit %d: %s", code, errs)
	}
	want := []string{
		"chat@1 ", "  system: You are helpful.", "  user: Weather in Paris?", "  state: a JSON state, all new",
		"chat@2 ", "  assistant calls get_weather({\"city\":\"Paris\"})", "  (model m1, tokens 120 in, 14 out)", "  added    /messages/0",
		"chat@3 ", "  tool get_weather: 12 C", "  added    /messages/1",
		"chat@4 ", "  assistant: It is 12 C.\\nBring a coat.", "  (outcome success)", "  changed  /messages/1",
	}
	checkLines(t, "replay chat", out, want)
	if !strings.Contains(out, "chat@4  ") || !strings.Contains(strings.Split(out, "chat@4")[1], "done") {
		t.Errorf("replay chat: step 4's status is not shown:\n%s", out)
	}

	out, errs, code = cli(t, store, "", "replay", "alt")
	if code != 0 {
		t.Fatalf("replay alt: exit %d: %s", code, errs)
	}
	checkLines(t, "replay alt", out, []string{
		"chat@1 ", "  user: Weather in Paris?",
		"alt@2 ", "(fork of chat@2)", "  assistant calls get_weather",
		"alt@3 ", `  record: {"note":"not the convention"}`, "  added    /messages/1",
	})
	if strings.Contains(out, "chat@3") || strings.Contains(out, "chat@2 ") {
		t.Errorf("replay alt shows the steps of chat after the fork:\n%s", out)
	}

	// --from and --json: one object per step, with its changes beside
	// the step before it even when that step is not replayed.
	out, errs, code = cli(t, store, "", "replay", "chat@3", "--from", "2", "--json")
	if code != 0 {
		t.Fatalf("replay --json: exit %d: %s", code, errs)
	}
	var lines []replayLine
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r replayLine
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("replay --json line %q: %v", l, err)
		}
		lines = append(lines, r)
	}
	if len(lines) != 2 || lines[0].Step != 2 || lines[1].Step != 3 {
		t.Fatalf("replay chat@3 --from 2 --json: %+v, want steps 2 and 3", lines)
	}
	if c := lines[0].ChangesJSON; c == nil || len(*c) != 1 || (*c)[0].Path != "/messages/0" || (*c)[0].Kind != "added" {
		t.Errorf("step 2's changes: %+v, want /messages/0 added", c)
	}
	if lines[0].Parent == nil || *lines[0].Parent != "chat@1" || len(lines[1].Record) == 0 {
		t.Errorf("replay --json lines lack parent or record: %+v", lines)
	}
}

// checkLines fails unless out holds each of want, in order, each at the
// start of a line or within one.
func checkLines(t *testing.T, what, out string, want []string) {
	t.Helper()
	rest := out
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("%s: %q missing (or out of order) in:\n%s", what, w, out)
		}
		rest = rest[i+len(w):]
	}
}

// TestReplayDirectoryStates replays directory states, a JSON state after
// them, and refuses a --from past the step replayed.
func TestReplayDirectoryStates(t *testing.T) {
	store := t.TempDir()
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "one")
	commitWith(t, store, "d", "", "--dir", dir)
	write("b.txt", "two")
	if err := os.Remove(filepath.Join(dir, "a.txt")); err != nil {
		t.Fatal(err)
	}
	commitWith(t, store, "d", "", "--dir", dir)
	commitWith(t, store, "d", `{"k":1}`, "-")
	out, errs, code := cli(t, store, "", "replay", "d")
	if code != 0 {
		t.Fatalf("replay d: exit %d: %s", code, errs)
	}
	checkLines(t, "replay d", out, []string{
		"d@1 ", "  state: a directory state, all new",
		"d@2 ", "  removed  a.txt", "  added    b.txt",
		"d@3 ", "  state replaced: a JSON state after a directory state",
	})
	_, errs, code = cli(t, store, "", "replay", "d@2", "--from", "3")
	if code != 2 || !strings.Contains(errs, "--from 3") {
		t.Errorf("replay d@2 --from 3: exit %d, %q; want exit 2 naming --from", code, errs)
	}
	// An empty --from is a bad value too, not --from left out.
	for _, bad := range []string{"0", "x", "-1", "", "99999999999999999999"} {
		if _, errs, code := cli(t, store, "", "replay", "d", "--from", bad); code != 2 || !strings.Contains(errs, "--from") {
			t.Errorf("replay --from %s: exit %d, %q; want 2", bad, code, errs)
		}
	}
	if _, errs, code := cli(t, store, "", "replay", "nosuch"); code != 1 || !strings.Contains(errs, "nosuch") {
		t.Errorf("replay nosuch: exit %d, %q; want exit 1 naming the session", code, errs)
	}
}

// TestReplayClipsUnlessFull keeps a long message to one clipped line,
// and terminal escapes harmless, unless --full.
func TestReplayClipsUnlessFull(t *testing.T) {
	store := t.TempDir()
	long := strings.Repeat("word ", 200)
	rec, _ := json.Marshal(map[string]any{"messages": []map[string]string{{"role": "user", "content": long + "\x1b[31m"}}})
	commitWith(t, store, "s", `{}`, "-", "--record", string(rec))
	out, _, code := cli(t, store, "", "replay", "s")
	if code != 0 || strings.Contains(out, "\x1b") || !strings.Contains(out, "...") || len(out) > 600 {
		t.Errorf("replay: exit %d, want one clipped line without raw escapes:\n%q", code, out)
	}
	out, _, code = cli(t, store, "", "replay", "s", "--full")
	if code != 0 || !strings.Contains(out, strings.TrimSpace(long)) || strings.Contains(out, "\x1b") {
		t.Errorf("replay --full: exit %d, want the whole message without raw escapes:\n%q", code, out)
	}
}

// TestReplayPrunedHistory: the oldest step a prune kept is not said to
// hold an all new state; its parent is gone, and replay says so.
func TestReplayPrunedHistory(t *testing.T) {
	store := t.TempDir()
	for range 4 {
		commitWith(t, store, "p", `{"k":[1,2,3]}`, "-")
	}
	if _, errs, code := cli(t, store, "", "prune", "p", "--keep-last", "2"); code != 0 {
		t.Fatal(errs)
	}
	out, errs, code := cli(t, store, "", "replay", "p")
	if code != 0 {
		t.Fatalf("replay p: exit %d: %s", code, errs)
	}
	checkLines(t, "replay p", out, []string{"p@3 ", "(older history pruned)", "  state: a JSON state (the steps before it were pruned)", "p@4 ", "  state: unchanged"})
	if strings.Contains(out, "all new") {
		t.Errorf("replay of a pruned session says its oldest step's state is all new:\n%s", out)
	}
}
