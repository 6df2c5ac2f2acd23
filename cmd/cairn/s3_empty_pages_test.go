package main

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/cairnlog/cairn/cas/s3compat"
	"github.com/cairnlog/cairn/internal/s3test"
)

// TestListingEmptyPagesWithoutEnd: a server whose answer to the listing
// of a session's steps is page after page without a key, each saying
// more are to come with a new token for the next, ends every command
// that lists them, on both URL schemes, in front of MinIO and
// versitygw: exit 1, saying the server answered as no S3 server does,
// and gc deletes nothing. Before, both schemes asked for the next page
// for as long as the server answered (for ever, or until the command was
// interrupted); here the server stops after three times the bound, and
// the session's steps were then taken for none: verify found 0 problems
// and log no steps. A step that is not there (s@9) is not said lost
// while the session's head cannot be found.
func TestListingEmptyPagesWithoutEnd(t *testing.T) {
	for _, srv := range s3test.Servers {
		t.Run(srv.Name, func(t *testing.T) {
			b := srv.Start(t)
			s3Env(t, b, b.SecretKey)
			stores, broken := listingProxy(t, b, func(prefix string) bool { return strings.Contains(prefix, "/steps/") },
				func(w http.ResponseWriter, r *http.Request) {
					q := r.URL.Query()
					// The nth page of this listing (its token says n-1).
					n, _ := strconv.Atoi(strings.TrimPrefix(q.Get("continuation-token"), "t"))
					n++
					var prefix strings.Builder
					xml.EscapeText(&prefix, []byte(q.Get("prefix")))
					more, next := n <= 3*s3compat.MaxEmptyPages, ""
					if more {
						next = fmt.Sprintf("<NextContinuationToken>t%d</NextContinuationToken>", n)
					}
					w.Header().Set("Content-Type", "application/xml")
					fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>%s</Name><Prefix>%s</Prefix><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>%v</IsTruncated>%s</ListBucketResult>`,
						b.Name, prefix.String(), more, next)
				})
			for _, scheme := range []string{"s3", "minio"} {
				t.Run(scheme, func(t *testing.T) {
					prefix := "empty-" + scheme
					store := stores(scheme, prefix)
					broken.Store(false)
					for _, c := range [][]string{{`{"n":1}`, "commit", "s", "-"}, {`{"n":2}`, "commit", "s", "-"}, {`{"o":1}`, "commit", "old", "-"}, {"", "rm", "old"}} {
						if _, errs, code := cli(t, store, c[0], c[1:]...); code != 0 {
							t.Fatalf("%s: exit %d, %s", strings.Join(c[1:], " "), code, errs)
						}
					}
					keys := func() []string {
						var ks []string
						for o := range b.Client(t).ListObjects(context.Background(), b.Name, minio.ListObjectsOptions{Prefix: prefix + "/", Recursive: true}) {
							if o.Err != nil {
								t.Fatal(o.Err)
							}
							ks = append(ks, o.Key)
						}
						return ks
					}
					before := keys()
					broken.Store(true)
					for _, args := range [][]string{{"gc", "--grace", "0s"}, {"verify"}, {"du"}, {"log", "s"}, {"show", "s@9"}} {
						out, errs, code := cli(t, store, "", args...)
						if code != 1 || !strings.Contains(errs, "answered as no S3 server does") || !strings.Contains(errs, "pages in a row without a key") ||
							storeWords.MatchString(errs) || sdkWords.MatchString(errs) {
							t.Errorf("cairn %s: exit %d, %q %q; want exit 1, saying the server answered as no S3 server does",
								strings.Join(args, " "), code, out, errs)
						}
					}
					broken.Store(false)
					after := keys()
					for _, k := range before {
						if !slices.Contains(after, k) {
							t.Errorf("gc deleted %s; want it to delete nothing", k)
						}
					}
					if out, errs, code := cli(t, store, "", "log", "s"); code != 0 || strings.Count(out, "\n") != 2 {
						t.Errorf("log s: exit %d, %q %s; want its two steps", code, out, errs)
					}
					if out, errs, code := cli(t, store, "", "verify"); code != 0 {
						t.Errorf("verify: exit %d, %q %s", code, out, errs)
					}
				})
			}
		})
	}
}
