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

// TestVerifyOneSessionUnlisted: a server that answers the listing of one
// session's steps with a web page, not an S3 listing, makes verify say
// that the session's steps cannot be listed and why, as log and sessions
// say it, naming no store key. Before, verify blamed the session's head
// hint, which it never failed to read: "BAD the head hint of session s
// cannot be read (find head of s: list steps/s/: not an S3 answer: …)
// (object steps/s/head)".
func TestVerifyOneSessionUnlisted(t *testing.T) {
	b := s3test.StartMinIO(t)
	s3Env(t, b, b.SecretKey)
	target, err := url.Parse(b.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	var broken atomic.Bool
	px := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if !broken.Load() || r.Method != http.MethodGet || q.Get("list-type") != "2" || !strings.HasSuffix(q.Get("prefix"), "/steps/s/") {
			rp.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>welcome</body></html>")
	}))
	defer px.Close()
	const why = "answered as no S3 server does ("
	for _, scheme := range []string{"s3", "minio"} {
		t.Run(scheme, func(t *testing.T) {
			prefix := "unlisted-" + scheme
			store := fmt.Sprintf("s3://%s/%s?endpoint=%s", b.Name, prefix, px.URL)
			if scheme == "minio" {
				store = fmt.Sprintf("minio://%s/%s/%s?secure=false", strings.TrimPrefix(px.URL, "http://"), b.Name, prefix)
			}
			broken.Store(false)
			for _, c := range [][]string{{`{"n":1}`, "commit", "s", "-"}, {`{"o":1}`, "commit", "t", "-"}} {
				if _, errs, code := cli(t, store, c[0], c[1:]...); code != 0 {
					t.Fatalf("%s: exit %d, %s", strings.Join(c[1:], " "), code, errs)
				}
			}
			broken.Store(true)
			for _, args := range [][]string{{"log", "s"}, {"sessions"}} {
				if _, errs, code := cli(t, store, "", args...); code != 1 || !strings.Contains(errs, why) || !strings.Contains(errs, "could not list the steps of session s") {
					t.Errorf("%s: exit %d, %q; want it to say the steps of s could not be listed", strings.Join(args, " "), code, errs)
				}
			}
			out, errs, code := cli(t, store, "", "verify")
			want := "BAD the steps of session s cannot be listed (the store " + why
			if code != 1 || !strings.Contains(out, want) || strings.Contains(out, "head hint") || strings.Contains(out, "find head") ||
				storeWords.MatchString(out) || sdkWords.MatchString(out) || strings.Count(out, "BAD ") != 1 {
				t.Errorf("verify: exit %d, %q %q; want exit 1 and one line %q…, naming no store key", code, out, errs, want)
			}
		})
	}
}
