package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJSONFlagsSayWhyNotJSON: a record, a reply or a patch that is not
// JSON says where and why, as a state does: a byte order mark (what
// Windows PowerShell 5 and Notepad put first in a UTF-8 file) by name,
// and the byte of any other mistake. They said only "--record is not
// valid JSON", "--input is not valid JSON" and "invalid patch: not a
// JSON array of operations", leaving a user whose text looks right
// nothing to look for. Nothing is committed.
func TestJSONFlagsSayWhyNotJSON(t *testing.T) {
	store := t.TempDir()
	bom := "\ufeff"
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "s", "-", "--status", "awaiting_input", "--record", `{"question":"ok?"}`); code != 0 {
		t.Fatalf("commit: exit %d: %s", code, errs)
	}
	file := filepath.Join(t.TempDir(), "record.json")
	if err := os.WriteFile(file, []byte(bom+`{"turn":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	const bomWords = "at byte 1: it starts with a byte order mark (U+FEFF)"
	for _, c := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{`{"a":2}`, []string{"commit", "s", "-", "--withdraw", "--record", bom + `{"turn":1}`}, "--record is not valid JSON: " + bomWords},
		{`{"a":2}`, []string{"commit", "s", "-", "--withdraw", "--record", `{"turn":1,}`}, "--record is not valid JSON: at byte 11: invalid character '}'"},
		{`{"a":2}`, []string{"commit", "s", "-", "--withdraw", "--record-file", file}, "is not valid JSON: " + bomWords},
		{"", []string{"reply", "s", "--input", bom + `{"approved":true}`}, "--input is not valid JSON: " + bomWords},
		{bom + `{"approved":true}`, []string{"reply", "s", "--input", "-"}, "is not valid JSON: " + bomWords},
		{bom + `[]`, []string{"commit", "s", "--patch", "-", "--withdraw"}, "invalid patch: not JSON: " + bomWords},
	} {
		out, errs, code := cli(t, store, c.stdin, c.args...)
		if code != 2 || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("cairn %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(c.args, " "), code, out, errs, c.want)
		}
	}
	if out, _, _ := cli(t, store, "", "log", "s"); strings.Count(out, "\n") != 1 {
		t.Errorf("the refused commands committed: log\n%s", out)
	}
}
