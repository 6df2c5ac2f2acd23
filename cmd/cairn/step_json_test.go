package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStepWritersPrintJSON: reply and fork, which write a step as commit
// does, take --json as commit does, and name the step they wrote with
// the fields and values log --json gives it (session, step, id, origin),
// plus the question's step (in_reply_to, as the reply's record holds it).
func TestStepWritersPrintJSON(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "s", "-"); code != 0 {
		t.Fatalf("commit: exit %d: %s", code, errs)
	}
	if _, errs, code := cli(t, store, `{"a":2}`, "commit", "s", "-", "--status", "awaiting_input", "--record", `{"question":"ok?"}`); code != 0 {
		t.Fatalf("commit the question: exit %d: %s", code, errs)
	}
	decode := func(what, line string) map[string]any {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%s: %v: %q", what, err, line)
		}
		return m
	}
	logHead := func(session string) map[string]any {
		t.Helper()
		out, errs, code := cli(t, store, "", "log", session, "--json")
		if code != 0 {
			t.Fatalf("log %s: exit %d: %s", session, code, errs)
		}
		first, _, _ := strings.Cut(out, "\n")
		return decode("log "+session+" --json", first)
	}
	for _, c := range []struct {
		args    []string
		session string
		extra   map[string]any
	}{
		{[]string{"reply", "s", "--input", `{"approved":true}`, "--json"}, "s", map[string]any{"in_reply_to": 2.0}},
		{[]string{"fork", "s@1", "t", "--json"}, "t", map[string]any{"origin": "s@1"}},
	} {
		out, errs, code := cli(t, store, "", c.args...)
		if code != 0 || strings.Count(out, "\n") != 1 {
			t.Fatalf("cairn %s: exit %d, stdout %q, stderr %q; want exit 0 and one JSON line", strings.Join(c.args, " "), code, out, errs)
		}
		got, head := decode("cairn "+strings.Join(c.args, " "), out), logHead(c.session)
		want := map[string]any{"session": head["session"], "step": head["step"], "id": head["id"]}
		for k, v := range c.extra {
			want[k] = v
		}
		if len(got) != len(want) {
			t.Errorf("cairn %s: %v; want exactly %v", strings.Join(c.args, " "), got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("cairn %s: %s is %v; want %v (log --json: %v)", strings.Join(c.args, " "), k, got[k], v, head)
			}
		}
	}
	if got := logHead("t")["origin"]; got != "s@1" {
		t.Errorf("log t --json: origin %v; want s@1", got)
	}
}
