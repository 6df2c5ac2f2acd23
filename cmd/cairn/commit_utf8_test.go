package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommitNotUTF8NamesFileAndOffset: cairn commit scanned a whole JSON
// state for UTF-8 itself, then the Go API's commit scanned it again; the
// CLI's scan said only that the input "is not UTF-8". The API's check is
// the one check now, and its refusal is exit 2 naming the input (file or
// stdin) and the offset of the first bad byte; so is a state that is not
// JSON at all. Nothing is written.
func TestCommitNotUTF8NamesFileAndOffset(t *testing.T) {
	store := t.TempDir()
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := file("bad.json", "{\"x\":\"\xff\"}")
	badLater := file("later.json", "{\"x\":\"ok\",\"y\":\"caf\xc3\"}")
	truncated := file("cut.json", `{"x":`)
	if _, errs, code := cli(t, store, `{"x":"ok","y":"fine"}`, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	for _, c := range []struct {
		session, stdin string
		args           []string
		want           []string
	}{
		{"new", "", []string{"--json-file", bad}, []string{"--json-file " + bad + ": ", "offset 6", "not UTF-8 (byte 0xff)"}},
		{"s", "", []string{"--json-file", badLater}, []string{"--json-file " + badLater + ": ", "offset 18", "not UTF-8"}},
		{"new", "{\"x\":\"\xc3\"}", []string{"-"}, []string{"the state (stdin): ", "offset 6", "not UTF-8 (byte 0xc3)"}},
		{"new", "", []string{"--json-file", truncated}, []string{"--json-file " + truncated + ": ", "offset 5", "invalid JSON"}},
	} {
		_, errs, code := cli(t, store, c.stdin, append([]string{"commit", c.session}, c.args...)...)
		for _, w := range c.want {
			if code != 2 || !strings.Contains(errs, w) {
				t.Errorf("commit %s %q: exit %d, %q; want exit 2 saying %q", c.session, c.args, code, errs, w)
			}
		}
	}
	if out, _, _ := cli(t, store, "", "log", "s"); strings.Count(out, "\n") != 1 {
		t.Fatalf("refused commits wrote steps:\n%s", out)
	}
	if _, _, code := cli(t, store, "", "log", "new"); code == 0 {
		t.Fatal("a refused first commit wrote a step")
	}
}
