package main

import (
	"strings"
	"testing"
)

// TestReplayShowsQuestionsAndReplies: replay shows a step's question to
// a human, as cairn inbox says it, also when its record follows the
// convention (whose messages alone hid the question), and the human's
// reply in words naming the step it answers.
func TestReplayShowsQuestionsAndReplies(t *testing.T) {
	store := t.TempDir()
	commitWith(t, store, "hq", `{"a":1}`, "-", "--status", "awaiting_input", "--record",
		`{"messages":[{"role":"assistant","content":"I want to deploy."}],"question":"Deploy to prod?"}`)
	if _, errs, code := cli(t, store, "", "reply", "hq", "--input", `{"approved":false}`); code != 0 {
		t.Fatalf("reply: exit %d: %s", code, errs)
	}
	commitWith(t, store, "hq", `{"a":2}`, "-", "--status", "awaiting_input", "--record", `{"question":{"kind":"approve","diff":"+x"}}`)
	if _, errs, code := cli(t, store, "", "reply", "hq", "--input", `"yes"`); code != 0 {
		t.Fatalf("reply: exit %d: %s", code, errs)
	}
	out, errs, code := cli(t, store, "", "replay", "hq")
	if code != 0 {
		t.Fatalf("replay hq: exit %d: %s", code, errs)
	}
	checkLines(t, "replay hq", out, []string{
		"hq@1 ", "awaiting_input", "  assistant: I want to deploy.", "  question: Deploy to prod?", "  state: a JSON state, all new",
		"hq@2 ", "  reply to hq@1: {\"approved\":false}", "  state: unchanged",
		"hq@3 ", "  question: {\"kind\":\"approve\",\"diff\":\"+x\"}", "  changed  /a",
		"hq@4 ", "  reply to hq@3: \"yes\"", "  state: unchanged",
	})
	if strings.Contains(out, "in_reply_to") {
		t.Errorf("replay hq: a reply shown as its raw record:\n%s", out)
	}
}
