package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/s3test"
)

// TestNotS3EndpointNeverAcknowledges: a store URL whose endpoint starts
// answering as no S3 server does — every request 200, with an empty body
// or a web page, or 404 with a web page (a load balancer's default
// backend, a proxy's page, a DNS name moved to a web server) — acknowledges no step and lists no
// empty store, on both URL schemes, in front of MinIO and versitygw.
// Before, s3:// took a 200 to a step's PUT as the step stored: a live
// session's commit, and `cairn commit` (exit 0, twice s@1), acknowledged
// steps nothing kept, and `cairn sessions`, gc and verify found an empty
// store (exit 0); a 404 was a listing or a PUT "not found", said with
// the store key.
func TestNotS3EndpointNeverAcknowledges(t *testing.T) {
	for _, srv := range s3test.Servers {
		t.Run(srv.Name, func(t *testing.T) {
			b := srv.Start(t)
			s3Env(t, b, b.SecretKey)
			px := newPageProxy(t, b, nil)
			for _, scheme := range []string{"s3", "minio"} {
				t.Run(scheme, func(t *testing.T) {
					store := px.storeURL(scheme, "impostor-"+scheme)
					testNotS3Endpoint(t, store, scheme, &px.page)
				})
			}
		})
	}
}

func testNotS3Endpoint(t *testing.T, store, scheme string, page *atomic.Pointer[string]) {
	ctx := context.Background()
	// said reports whether a command's error says what the endpoint did
	// in words: "answered as no S3 server does", or, minio-go's reading
	// of a 404 page to a bucket's request, "the bucket does not exist".
	said := func(body, errs string) bool {
		return strings.Contains(errs, "answered as no S3 server does") ||
			scheme == "minio" && strings.HasPrefix(body, "404 ") && strings.Contains(errs, "the bucket does not exist")
	}
	page.Store(nil)
	ws, err := cairn.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	s, _ := ws.Session("s")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":1}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, `{"n":1}`, "commit", "c", "-"); code != 0 {
		t.Fatalf("commit c@1: exit %d, %s", code, errs)
	}
	for _, body := range []string{"", "<html><body>Welcome</body></html>", "404 <html><body>No such page</body></html>"} {
		// A live session that knows its head commits with one PUT.
		page.Store(nil)
		s, _ := ws.Session("s")
		if _, err := s.Head(ctx); err != nil {
			t.Fatal(err)
		}
		page.Store(&body)
		if st, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":2}`)), cairn.CommitOptions{}); err == nil {
			t.Errorf("body %q: a live session's commit acknowledged %s@%d", body, st.Session, st.Number)
		} else if !errors.Is(err, cairn.ErrUnavailable) || !strings.Contains(err.Error(), "answered as no S3 server does") {
			t.Errorf("body %q: a live session's commit: %v; want cairn.ErrUnavailable, saying the server answered as no S3 server does", body, err)
		}
		if out, errs, code := cli(t, store, `{"n":2}`, "commit", "c", "-"); code != 1 || !said(body, errs) {
			t.Errorf("body %q: cairn commit: exit %d, %q %q; want exit 1, saying the server answered as no S3 server does", body, code, out, errs)
		}
		for _, args := range [][]string{{"sessions"}, {"gc", "--grace", "0s"}, {"verify"}} {
			out, errs, code := cli(t, store, "", args...)
			if code != 1 || !said(body, errs) ||
				storeWords.MatchString(errs) || sdkWords.MatchString(errs) {
				t.Errorf("body %q: cairn %s: exit %d, %q %q; want exit 1, saying the server answered as no S3 server does",
					body, strings.Join(args, " "), code, out, errs)
			}
		}
	}
	// Back to the server: nothing acknowledged was lost, nothing else landed.
	page.Store(nil)
	for _, name := range []string{"s", "c"} {
		if out, errs, code := cli(t, store, "", "log", name); code != 0 || strings.Count(out, "\n") != 1 {
			t.Errorf("log %s: exit %d, %q %s; want its one step", name, code, out, errs)
		}
	}
	if out, errs, code := cli(t, store, "", "verify"); code != 0 {
		t.Errorf("verify: exit %d, %q %s", code, out, errs)
	}
}

// TestListingAsWebPageNeverEmpty: an endpoint whose every other answer
// is an S3 server's but whose answer to a listing is 200 and a web page
// (a captive portal's, a web server's) lists no empty store, on both URL
// schemes, in front of MinIO and versitygw: every command that lists
// (sessions, du, gc, verify, head discovery in log, and the first commit
// of a session) fails, exit 1, saying the server answered as no S3 server does. Before,
// minio:// read such a page as a listing without keys: `cairn sessions`
// said "no sessions" and verify "0 problems", exit 0, and a commit to a
// session with steps was taken as its first step.
func TestListingAsWebPageNeverEmpty(t *testing.T) {
	for _, srv := range s3test.Servers {
		t.Run(srv.Name, func(t *testing.T) {
			b := srv.Start(t)
			s3Env(t, b, b.SecretKey)
			px := newPageProxy(t, b, func(r *http.Request) bool {
				return r.Method == http.MethodGet && r.URL.Query().Has("list-type")
			})
			page := &px.page
			for _, scheme := range []string{"s3", "minio"} {
				t.Run(scheme, func(t *testing.T) {
					store := px.storeURL(scheme, "page-"+scheme)
					page.Store(nil)
					if _, errs, code := cli(t, store, `{"n":1}`, "commit", "s", "-"); code != 0 {
						t.Fatalf("commit s@1: exit %d, %s", code, errs)
					}
					for _, body := range []string{
						"<html><body>Welcome</body></html>",
						"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Sign in</title></head><body><p>Sign in to use this network</body></html>",
						`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>x</Name><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>`,
					} {
						page.Store(&body)
						for _, args := range [][]string{{"sessions"}, {"du"}, {"gc", "--grace", "0s"}, {"verify"}, {"log", "s"}, {"commit", "t", "-"}} {
							out, errs, code := cli(t, store, `{"n":2}`, args...)
							if code != 1 || !strings.Contains(errs, "answered as no S3 server does") ||
								storeWords.MatchString(errs) || sdkWords.MatchString(errs) {
								t.Errorf("listing answered %.30q…: cairn %s: exit %d, %q %q; want exit 1, saying the server answered as no S3 server does",
									body, strings.Join(args, " "), code, out, errs)
							}
						}
					}
					// Back to the server: s has its one step, and nothing else landed.
					page.Store(nil)
					if out, errs, code := cli(t, store, "", "sessions"); code != 0 || strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "s ") {
						t.Errorf("sessions: exit %d, %q %s; want s alone", code, out, errs)
					}
					if out, errs, code := cli(t, store, "", "log", "s"); code != 0 || strings.Count(out, "\n") != 1 {
						t.Errorf("log s: exit %d, %q %s; want its one step", code, out, errs)
					}
					if out, errs, code := cli(t, store, "", "verify"); code != 0 {
						t.Errorf("verify: exit %d, %q %s", code, out, errs)
					}
				})
			}
		})
	}
}

// pageProxy stands before an S3 server and forwards every request to it,
// but while page holds a body it answers the requests it is set to
// (all, or those match accepts) with that body as a web page: status
// 404 if the body begins "404 ", else 200.
type pageProxy struct {
	page   atomic.Pointer[string] // nil: forward every request
	url    string
	bucket string
}

// newPageProxy starts a pageProxy before the server of bucket b, for the
// requests match accepts (nil: every request); the test stops it.
func newPageProxy(t *testing.T, b *s3test.Bucket, match func(*http.Request) bool) *pageProxy {
	target, err := url.Parse(b.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	p := &pageProxy{bucket: b.Name}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if body := p.page.Load(); body != nil && (match == nil || match(r)) {
			w.Header().Set("Content-Type", "text/html")
			if strings.HasPrefix(*body, "404 ") {
				w.WriteHeader(http.StatusNotFound)
			}
			fmt.Fprint(w, *body)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

// storeURL is the store URL of prefix in the proxy's bucket through the
// proxy, for scheme "s3" or "minio".
func (p *pageProxy) storeURL(scheme, prefix string) string {
	if scheme == "s3" {
		return fmt.Sprintf("s3://%s/%s?endpoint=%s", p.bucket, prefix, p.url)
	}
	return fmt.Sprintf("minio://%s/%s/%s?secure=false", strings.TrimPrefix(p.url, "http://"), p.bucket, prefix)
}
