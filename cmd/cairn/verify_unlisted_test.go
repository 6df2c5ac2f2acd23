package main

import (
	"fmt"
	"net/http"
	"strings"
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
	stores, broken := listingProxy(t, b, func(prefix string) bool { return strings.HasSuffix(prefix, "/steps/s/") },
		func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body>welcome</body></html>")
		})
	const why = "answered as no S3 server does ("
	for _, scheme := range []string{"s3", "minio"} {
		t.Run(scheme, func(t *testing.T) {
			store := stores(scheme, "unlisted-"+scheme)
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
