package main

import (
	"strings"
	"testing"
)

// TestExportRemovedSessionSaidSo: `export --session b` of a session that
// was removed said only "exported nothing: no trajectory was selected (1
// session looked at)", exit 0, leaving the user to look for a mistake in
// the filters; it says the session was removed. A glob is not checked
// name by name, and a session that never was is a mistyped name, as
// before (exit 1).
func TestExportRemovedSessionSaidSo(t *testing.T) {
	store := t.TempDir()
	rec := `--record={"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}`
	for _, c := range [][]string{{"commit", "a", "-", rec}, {"commit", "b", "-", rec}, {"rm", "b"}} {
		if _, errs, code := cli(t, store, `{}`, c...); code != 0 {
			t.Fatalf("%v: exit %d: %s", c, code, errs)
		}
	}
	const note = "note: session b was removed (cairn rm), so it has no trajectory to export"
	_, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--session", "b")
	if code != 0 || !strings.Contains(errs, note) {
		t.Errorf("export --session b: exit %d, %q; want exit 0 and %q", code, errs, note)
	}
	_, errs, code = cli(t, store, "", "export", "--format", "openai-jsonl", "--session", "b*")
	if code != 0 || strings.Contains(errs, "note: session") {
		t.Errorf("export --session 'b*': exit %d, %q; want exit 0 and no note", code, errs)
	}
	out, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--session", "a", "--session", "b")
	if code != 0 || strings.Contains(errs, "note: session") || !strings.Contains(out, `"session":"a"`) {
		t.Errorf("export of a and b: exit %d, %q %q; want a's line and no note (something was exported)", code, out, errs)
	}
}
