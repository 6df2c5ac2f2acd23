package cairn_test

import (
	"context"
	"errors"
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
