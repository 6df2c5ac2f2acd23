package cairn_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestOpenBadStoreURL: a store URL that names nothing is refused as bad
// input in words about the URL, not about Go packages.
func TestOpenBadStoreURL(t *testing.T) {
	for _, tc := range []struct{ url, want, not string }{
		{"file://", "names no directory", ""},
		{"ftp://x", `unknown scheme "ftp"`, "github.com"},
		{"s3://b", `unknown scheme "s3"`, ""}, // not linked here: the hint says how
	} {
		ws, err := cairn.Open(context.Background(), tc.url)
		if err == nil {
			ws.Close()
			t.Errorf("Open(%q) succeeded, want an error", tc.url)
			continue
		}
		if !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), tc.want) ||
			(tc.not != "" && strings.Contains(err.Error(), tc.not)) {
			t.Errorf("Open(%q) = %v; want ErrInvalid saying %q", tc.url, err, tc.want)
		}
	}
}

// TestOpenStoreURLThatDoesNotParse: a URL net/url cannot parse is bad
// input, said without the "invalid argument" prefix of the sentinel.
func TestOpenStoreURLThatDoesNotParse(t *testing.T) {
	_, err := cairn.Open(context.Background(), "mem://b/%zz")
	if !errors.Is(err, cairn.ErrInvalid) || strings.Contains(err.Error(), "invalid argument") {
		t.Fatalf("Open = %v; want ErrInvalid in the URL's words", err)
	}
}

// TestFileURLWithLocalhost: file://localhost/abs names /abs, as RFC 8089
// and every URL library read it; it used to be the relative path
// localhost/abs, a store made in whatever directory the command ran.
func TestFileURLWithLocalhost(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t.Chdir(t.TempDir())
	ws, err := cairn.Open(ctx, "file://localhost"+dir+"/store")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if got, want := ws.URL(), dir+"/store"; got != want {
		t.Fatalf("URL() = %q, want %q", got, want)
	}
	s, err := ws.Session("s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "store")); err != nil {
		t.Fatalf("the store is not at %s/store: %v", dir, err)
	}
	if _, err := os.Stat("localhost"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a directory localhost was made where the command ran (%v)", err)
	}
}

// TestParseRef: the one reading of SESSION and SESSION@N, which the CLI,
// the HTTP API and the MCP server share, so that each refuses what the
// others refuse, in the same words.
func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		ref, session string
		step         uint64
		err          string
	}{
		{"s", "s", 0, ""},
		{"s@1", "s", 1, ""},
		{"s@01", "s", 1, ""},
		{"s@18446744073709551615", "s", 18446744073709551615, ""},
		{"s@0", "", 0, `bad step reference "s@0": steps are numbered from 1`},
		{"s@", "", 0, `bad step reference "s@": want SESSION@N with N a whole number, 1 or more`},
		{"s@+1", "", 0, `bad step reference "s@+1": want SESSION@N`},
		{"s@1@1", "", 0, `bad step reference "s@1@1": want SESSION@N`},
		{"s@18446744073709551616", "", 0, `step number 18446744073709551616 is too large (at most 18446744073709551615)`},
		{"@1", "", 0, `invalid session name ""`},
		{"a b", "", 0, `invalid session name "a b"`},
		{strings.Repeat("x", 1000) + "@1", "", 0, `invalid session name "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…" (1000 characters)`},
	} {
		session, step, err := cairn.ParseRef(tc.ref)
		switch {
		case tc.err == "" && (err != nil || session != tc.session || step != tc.step):
			t.Errorf("ParseRef(%.40q) = %q, %d, %v; want %q, %d", tc.ref, session, step, err, tc.session, tc.step)
		case tc.err != "" && (!errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseRef(%.40q) = %v; want ErrInvalid saying %q", tc.ref, err, tc.err)
		}
	}
}
