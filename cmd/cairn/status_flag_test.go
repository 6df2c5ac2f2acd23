package main

import (
	"strings"
	"testing"
)

// TestStatusFlagWords: a --status that is no status is bad input (exit
// 2) said of the flag, as every other flag's bad value is, by commit and
// export alike; commit writes nothing.
func TestStatusFlagWords(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"i":1}`, "commit", "s", "-"); code != 0 {
		t.Fatalf("commit: exit %d: %s", code, errs)
	}
	want := `--status "finished": want running, awaiting_input or done`
	for _, c := range []struct {
		stdin string
		args  []string
	}{
		{`{"i":2}`, []string{"commit", "s", "-", "--status", "finished"}},
		{"", []string{"export", "--format", "openai-jsonl", "--status", "finished"}},
	} {
		out, errs, code := cli(t, store, c.stdin, c.args...)
		if code != 2 || !strings.Contains(errs, want) || out != "" {
			t.Errorf("cairn %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(c.args, " "), code, out, errs, want)
		}
	}
	if out, _, _ := cli(t, store, "", "log", "s"); strings.Count(out, "\n") != 1 {
		t.Errorf("log after the refused commit: %q; want s@1 alone", out)
	}
}
