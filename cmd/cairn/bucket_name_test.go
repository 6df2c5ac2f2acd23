package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestMinioBucketNameSaidOfTheStoreURL: a minio:// store whose bucket no
// S3 server can hold (too short, too long, an IP address, a bad
// character) is bad input, exit 2, said of the store URL's bucket before
// any request, by every command alike. Listing commands printed
// minio-go's own words beside a store key ("list sessions/: Bucket name
// cannot be shorter than 3 characters", exit 1), while commit said
// "the bucket's name is not valid" after trying.
func TestMinioBucketNameSaidOfTheStoreURL(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	noAWS(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "cairn-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "cairn-test-secret")
	for _, bucket := range []string{"b", strings.Repeat("b", 64), "10.0.0.1", "bkt..x", "bkt!"} {
		url := "minio://" + host + "/" + bucket + "/ws?secure=false"
		for _, args := range [][]string{{"sessions"}, {"inbox"}, {"du"}, {"verify"}, {"log", "s"}, {"commit", "s", "-"}} {
			out, errs, code := cli(t, url, `{}`, args...)
			want := "bucket \"" + bucket + "\" is not a valid bucket name"
			if code != 2 || out != "" || !strings.Contains(errs, want) || strings.Contains(errs, "sessions/") || strings.Contains(errs, "Bucket name") {
				t.Errorf("cairn %s on bucket %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(args, " "), bucket, code, out, errs, want)
			}
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests reached the server; want none", n)
	}
}
