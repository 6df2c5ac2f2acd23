package mcpserver

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// A directory state may hold any name its file system allows; show,
// resume and diff gave a\xff and a\xfe both as "a\ufffd" (encoding/json
// writes bytes that are not UTF-8 as U+FFFD), so an agent could neither
// tell them apart nor open either. As the CLI's --json and the HTTP API
// do, the path stays the text, and the exact bytes come beside it:
// path_bytes on a change, files_bytes (index and bytes) for a listing.
func TestFileNamesNotUTF8(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skipf("%s refuses file names that are not UTF-8; CI runs this test on Linux", runtime.GOOS)
	}
	ws := cairn.OpenStore(mem.New())
	empty, dir := t.TempDir(), t.TempDir()
	for _, n := range []string{"a\xff", "a\xfe", "ok"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal(err)
			}
			t.Skipf("this file system refuses a name that is not UTF-8: %v", err)
		}
	}
	d, _ := ws.Session("d")
	for _, p := range []string{empty, dir} {
		if _, err := d.Commit(t.Context(), cairn.Dir(p), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cs := connect(t, ws)
	want := "a\xfe a\xff ok"
	exact := func(files []string, bytes []FileBytes) string {
		names := append([]string(nil), files...)
		for _, b := range bytes {
			if strings.ToValidUTF8(string(b.PathBytes), "\ufffd") != files[b.Index] {
				t.Errorf("files_bytes %q at %d, files has %q", b.PathBytes, b.Index, files[b.Index])
			}
			names[b.Index] = string(b.PathBytes)
		}
		return strings.Join(names, " ")
	}
	var st StepState
	call(t, cs, ToolShow, map[string]any{"ref": "d"}, &st, false)
	if got := exact(st.Files, st.FilesBytes); got != want || len(st.FilesBytes) != 2 {
		t.Errorf("show: files %q (files_bytes %v), want %q", got, st.FilesBytes, want)
	}
	var r ResumeOut
	call(t, cs, ToolResume, map[string]any{"session": "d"}, &r, false)
	if got := exact(r.Files, r.FilesBytes); got != want {
		t.Errorf("resume: files %q, want %q", got, want)
	}
	var diff DiffOut
	call(t, cs, ToolDiff, map[string]any{"a": "d@1", "b": "d@2"}, &diff, false)
	var names []string
	for _, c := range diff.Changes {
		name := c.Path
		if c.PathBytes != nil {
			name = string(c.PathBytes)
		}
		names = append(names, name)
	}
	if got := strings.Join(names, " "); got != want {
		t.Errorf("diff: changes %q, want %q", got, want)
	}
}
