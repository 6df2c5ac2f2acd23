package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairnlog/cairn/internal/s3test"
)

// listingProxy stands before b's server as a broken one would: it passes
// every request on, but once broken is set it answers each listing
// (a ListObjectsV2 GET) whose prefix breaks takes with answer. stores
// names the store at prefix in b's bucket through it, by the s3:// and
// the minio:// scheme.
func listingProxy(t *testing.T, b *s3test.Bucket, breaks func(prefix string) bool, answer http.HandlerFunc) (stores func(scheme, prefix string) string, broken *atomic.Bool) {
	t.Helper()
	target, err := url.Parse(b.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	broken = new(atomic.Bool)
	px := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if !broken.Load() || r.Method != http.MethodGet || q.Get("list-type") != "2" || !breaks(q.Get("prefix")) {
			rp.ServeHTTP(w, r)
			return
		}
		answer(w, r)
	}))
	t.Cleanup(px.Close)
	return func(scheme, prefix string) string {
		if scheme == "minio" {
			return fmt.Sprintf("minio://%s/%s/%s?secure=false", strings.TrimPrefix(px.URL, "http://"), b.Name, prefix)
		}
		return fmt.Sprintf("s3://%s/%s?endpoint=%s", b.Name, prefix, px.URL)
	}, broken
}
