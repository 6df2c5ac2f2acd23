package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeTokenNotUTF8SaysTheByte: a token file holding a byte that is
// not UTF-8 (a binary file given by mistake, a token in Latin-1) was
// said to hold "U+FFFD", the replacement character, which it does not
// hold: the file's byte is named now. A character that is UTF-8 but not
// ASCII is still named as the character.
func TestServeTokenNotUTF8SaysTheByte(t *testing.T) {
	store := t.TempDir()
	dir := t.TempDir()
	for _, tc := range []struct{ token, want, not string }{
		{"ab\xffcd", "token file F holds the byte 0xFF, which is not UTF-8 text", "U+FFFD"},
		{"caf\u00e9", "token file F holds U+00E9, a character an HTTP header cannot carry", ""},
	} {
		f := filepath.Join(dir, "token")
		if err := os.WriteFile(f, []byte(tc.token), 0o600); err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		code := run(context.Background(), []string{"--store", store, "serve", "--listen", "127.0.0.1:0", "--token-file", f}, strings.NewReader(""), io.Discard, &stderr)
		got := strings.ReplaceAll(stderr.String(), f, "F")
		if code != 2 || !strings.Contains(got, tc.want) || tc.not != "" && strings.Contains(got, tc.not) {
			t.Errorf("serve with the token %q: exit %d, %q; want exit 2 saying %q", tc.token, code, got, tc.want)
		}
	}
}
