package minio_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas/minio"
)

// TestSecureNotABoolSaysSo: a bad secure is said in the URL's words, not
// as strconv's error.
func TestSecureNotABoolSaysSo(t *testing.T) {
	u, _ := url.Parse("minio://127.0.0.1:9000/bkt/ws?secure=nope")
	_, _, _, err := minio.ParseURL(u)
	if err == nil || strings.Contains(err.Error(), "strconv") || !strings.Contains(err.Error(), `secure "nope": want true or false`) {
		t.Fatalf("ParseURL = %v, want secure \"nope\": want true or false", err)
	}
}
