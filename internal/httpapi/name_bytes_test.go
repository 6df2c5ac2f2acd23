package httpapi

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairnlog/cairn"
)

// A directory state may hold any name its file system allows, and
// encoding/json writes bytes that are not UTF-8 as U+FFFD: a step's
// files and a diff's changes gave "a\ufffd" for both a\xff and a\xfe, so
// a client could neither tell them apart nor name either file. As the
// CLI's --json does, path stays the text, and path_bytes, only for a
// name that is not UTF-8, holds its exact bytes (base64).
func TestFileNamesNotUTF8(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skipf("%s refuses file names that are not UTF-8; CI runs this test on Linux", runtime.GOOS)
	}
	c, srv := newChecker(t, Options{})
	empty, dir := t.TempDir(), t.TempDir()
	for _, n := range []string{"a\xff", "a\xfe", "ok"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal(err)
			}
			t.Skipf("this file system refuses a name that is not UTF-8: %v", err)
		}
	}
	d, _ := srv.ws.Session("d")
	for _, p := range []string{empty, dir} {
		if _, err := d.Commit(t.Context(), cairn.Dir(p), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	names := func(what string, entries any) string {
		var out []string
		for _, e := range entries.([]any) {
			e := e.(map[string]any)
			p := e["path"].(string)
			name := p
			if b, ok := e["path_bytes"]; ok {
				raw, err := base64.StdEncoding.DecodeString(b.(string))
				if err != nil || utf8.Valid(raw) || strings.ToValidUTF8(string(raw), "\ufffd") != p {
					t.Errorf("%s: path %q with path_bytes %v (%q, %v)", what, p, b, raw, err)
				}
				name = string(raw)
			}
			out = append(out, name)
		}
		return strings.Join(out, " ")
	}
	want := "a\xfe a\xff ok"
	if got := names("files", c.do("GET", "/v1/sessions/d/head", "", 200)["files"]); got != want {
		t.Errorf("GET head: files %q, want %q", got, want)
	}
	if got := names("changes", c.do("GET", "/v1/diff?a=d@1&b=d@2", "", 200)["changes"]); got != want {
		t.Errorf("GET diff: changes %q, want %q", got, want)
	}
}
