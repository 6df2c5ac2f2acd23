package s3_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas/s3"
)

// TestPathStyleNotABoolSaysSo: a bad path_style is said in the URL's
// words, not as strconv's error.
func TestPathStyleNotABoolSaysSo(t *testing.T) {
	u, _ := url.Parse("s3://bkt/ws?endpoint=http://127.0.0.1:9000&path_style=maybe")
	_, _, _, err := s3.ParseURL(u)
	if err == nil || strings.Contains(err.Error(), "strconv") || !strings.Contains(err.Error(), `path_style "maybe": want true or false`) {
		t.Fatalf("ParseURL = %v, want path_style \"maybe\": want true or false", err)
	}
}
