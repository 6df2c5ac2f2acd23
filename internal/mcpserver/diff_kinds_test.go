package mcpserver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestDiffOfTwoKindsInWords: diff of a JSON state and a directory state
// answered the Go API's error as it is, "diff j@1 d@1: a json state and a
// dir state", the kinds' internal names, where the HTTP API says which
// argument holds which state and what diff compares. The tool says it in
// the HTTP API's words now.
func TestDiffOfTwoKindsInWords(t *testing.T) {
	ws := cairn.OpenStore(mem.New())
	j, _ := ws.Session("j")
	if _, err := j.Commit(t.Context(), cairn.JSON([]byte(`{}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, _ := ws.Session("d")
	if _, err := d.Commit(t.Context(), cairn.Dir(dir), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, ws)
	for _, tc := range []struct{ a, b, want string }{
		{"j", "d@1", "a (j@1) holds a JSON state and b (d@1) a directory state: diff compares two JSON states or two directory states"},
		{"d", "j@1", "a (d@1) holds a directory state and b (j@1) a JSON state: diff compares two JSON states or two directory states"},
	} {
		text := call(t, cs, ToolDiff, map[string]any{"a": tc.a, "b": tc.b}, nil, true)
		if text != tc.want {
			t.Errorf("diff %s %s: %q, want %q", tc.a, tc.b, text, tc.want)
		}
	}
}
