package s3compat_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas/minio"
	"github.com/cairnlog/cairn/cas/s3"
	"github.com/cairnlog/cairn/cas/s3compat"
)

// TestURLBoolOneOwner: the boolean parameters of both schemes (s3://
// path_style, minio:// secure) take the same spellings and say a bad
// value in the same words, s3compat.URLBool's. They were parsed twice,
// and had drifted: an empty path_style= was taken silently as the
// default, where an empty secure= was an error.
func TestURLBoolOneOwner(t *testing.T) {
	for _, v := range []string{"true", "false", "1", "0", "t", "F", "TRUE", "False", "", "maybe", "yes", "on"} {
		want, wantErr := s3compat.URLBool("P", v)
		q := url.QueryEscape(v)
		su, _ := url.Parse("s3://bkt/ws?endpoint=http://127.0.0.1:9000&path_style=" + q)
		mu, _ := url.Parse("minio://127.0.0.1:9000/bkt/ws?secure=" + q)
		_, _, so, serr := s3.ParseURL(su)
		_, _, mo, merr := minio.ParseURL(mu)
		if wantErr != nil {
			for name, err := range map[string]error{"path_style": serr, "secure": merr} {
				if want := fmt.Sprintf("%s %q: want true or false", name, v); err == nil || !strings.HasSuffix(err.Error(), want) {
					t.Errorf("%s=%q: %v; want an error ending %s", name, v, err, want)
				}
			}
			continue
		}
		if serr != nil || so.PathStyle != want {
			t.Errorf("path_style=%q: %v, %v; want %v", v, so.PathStyle, serr, want)
		}
		if merr != nil || mo.Secure != want {
			t.Errorf("secure=%q: %v, %v; want %v", v, mo.Secure, merr, want)
		}
	}
}
