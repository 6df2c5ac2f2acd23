package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestJSONInputSaidInWords: a state that is empty, starts with a byte
// order mark, or holds a stray non-ASCII character is refused (exit 2,
// nothing written) saying what it is. They said "unexpected end of
// input" and "unexpected character 'ï'" (the BOM's first byte as
// Latin-1).
func TestJSONInputSaidInWords(t *testing.T) {
	store := t.TempDir()
	for _, c := range []struct{ in, want string }{
		{"", "offset 0: empty: want a JSON value"},
		{" \n", "offset 2: empty: want a JSON value"},
		{"\xef\xbb\xbf{\"a\":1}", "offset 0: a byte order mark (U+FEFF) before the value, which JSON does not allow: save the text as UTF-8 without one"},
		{`{"a":é}`, "offset 5: unexpected character 'é'"},
		{"[1,", "offset 3: unexpected end of input"},
	} {
		_, errs, code := cli(t, store, c.in, "commit", "s", "-")
		if want := "cairn commit: the state (stdin): invalid JSON: " + c.want + "\n"; code != 2 || errs != want {
			t.Errorf("commit %q: exit %d, %q; want 2, %q", c.in, code, errs, want)
		}
		f := filepath.Join(t.TempDir(), "state.json")
		writeFile(t, f, []byte(c.in))
		_, errs, code = cli(t, store, "", "commit", "s", "--json-file", f)
		if want := "cairn commit: --json-file " + f + ": invalid JSON: " + c.want + "\n"; code != 2 || errs != want {
			t.Errorf("commit --json-file of %q: exit %d, %q; want 2, %q", c.in, code, errs, want)
		}
	}
	if entries, _ := os.ReadDir(store); len(entries) != 0 {
		t.Errorf("refused commits wrote %d entries to the store", len(entries))
	}
}
