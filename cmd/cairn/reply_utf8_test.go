package main

import (
	"strings"
	"testing"
)

// TestReplyInputNotUTF8: cairn reply took a JSON text holding a byte
// that is not UTF-8 (json.Valid lets it through) and committed it into
// the reply's record, exit 0, where cairn commit --record and the HTTP
// API's reply refuse such text (the README: a record that is not UTF-8
// JSON is exit 2). It is refused, and the question still awaits input.
func TestReplyInputNotUTF8(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{}`, "commit", "q", "-", "--status", "awaiting_input", "--record", `{"question":"ok?"}`); code != 0 {
		t.Fatalf("commit: %s", errs)
	}
	for _, args := range [][]string{{"--input", "\"\xff\""}, {"--input", "-"}} {
		out, errs, code := cli(t, store, "{\"a\":\"\xfe\"}", append([]string{"reply", "q"}, args...)...)
		if want := "cairn reply: --input is not UTF-8, as JSON must be\n"; code != 2 || out != "" || errs != want {
			t.Errorf("reply %q: exit %d, out %q, err %q; want 2, %q", args, code, out, errs, want)
		}
	}
	if out, _, _ := cli(t, store, "", "log", "q"); strings.Count(out, "\n") != 1 {
		t.Errorf("a reply was committed: %s", out)
	}
}
