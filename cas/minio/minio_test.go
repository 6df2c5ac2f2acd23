package minio_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/castest"
	"github.com/cairnlog/cairn/cas/minio"
	"github.com/cairnlog/cairn/cas/retry"
	"github.com/cairnlog/cairn/cas/timeout"
	"github.com/cairnlog/cairn/internal/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

var servers = []struct {
	name  string
	start func(testing.TB) *s3test.Bucket
}{
	{"minio", s3test.StartMinIO},
	{"versitygw", s3test.StartVersityGW},
}

func open(t testing.TB, b *s3test.Bucket, prefix string, rt http.RoundTripper) *minio.Store {
	t.Helper()
	s, err := minio.Open(context.Background(), b.Name, prefix, minio.Options{
		Endpoint:  b.Host,
		Region:    b.Region,
		AccessKey: b.AccessKey,
		SecretKey: b.SecretKey,
		Transport: rt,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConformance runs the cas conformance suite against each server, a
// fresh prefix of one bucket per subtest.
func TestConformance(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			b := srv.start(t)
			n := 0
			castest.Run(t, func(t *testing.T) cas.Store {
				n++
				return open(t, b, fmt.Sprintf("ws-%d", n), nil)
			})
		})
	}
}

// TestConformanceBucketRoot: a store without a prefix owns the bucket.
func TestConformanceBucketRoot(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			castest.Run(t, func(t *testing.T) cas.Store { return open(t, srv.start(t), "", nil) })
		})
	}
}

// TestRequestsPerCall: each store call is exactly one HTTP request; in
// particular one Put (plain or conditional, won or lost) is one PUT, with
// no bucket-location lookup before it.
func TestRequestsPerCall(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			b := srv.start(t)
			c := castest.NewCountingTransport()
			s := open(t, b, "count", c)
			castest.OneRequestPerCall(t, s, c.Requests)
		})
	}
}

// TestNoClientRetries: a server in trouble gets one request per call, and
// the error is classified for the retry wrapper.
func TestNoClientRetries(t *testing.T) {
	for _, tc := range []struct {
		status    int
		code      string
		transient bool
	}{
		{503, "SlowDown", true},
		{500, "InternalError", true},
		{501, "NotImplemented", false},
		{403, "AccessDenied", false},
	} {
		t.Run(tc.code, func(t *testing.T) {
			var n atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n.Add(1)
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(tc.status)
				fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>test</Message></Error>`, tc.code)
			}))
			defer srv.Close()
			s, err := minio.Open(context.Background(), "bucket", "p", minio.Options{
				Endpoint: strings.TrimPrefix(srv.URL, "http://"), AccessKey: "ak", SecretKey: "sk",
			})
			if err != nil {
				t.Fatal(err)
			}
			err = s.Put(context.Background(), "k", []byte("x"), cas.PutOptions{IfAbsent: true})
			if err == nil || n.Load() != 1 {
				t.Fatalf("Put: %d requests, err %v; want 1 request and an error", n.Load(), err)
			}
			if got := retry.IsTransient(err); got != tc.transient {
				t.Fatalf("IsTransient(%v) = %v, want %v", err, got, tc.transient)
			}
		})
	}
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		in             string
		bucket, prefix string
		opts           minio.Options
		bad            bool
	}{
		{in: "minio://127.0.0.1:9000/bkt", bucket: "bkt", opts: minio.Options{Endpoint: "127.0.0.1:9000", Secure: true}},
		{in: "minio://127.0.0.1:9000/bkt/ws/one/?secure=false", bucket: "bkt", prefix: "ws/one",
			opts: minio.Options{Endpoint: "127.0.0.1:9000"}},
		{in: "minio://s3.example.com/bkt/ws?region=eu-west-1", bucket: "bkt", prefix: "ws",
			opts: minio.Options{Endpoint: "s3.example.com", Secure: true, Region: "eu-west-1"}},
		{in: "minio://127.0.0.1:9000", bad: true},
		{in: "minio://127.0.0.1:9000/", bad: true},
		{in: "minio:///bkt/ws", bad: true},
		{in: "minio://h:1/bkt/a/../x", bad: true},
		{in: "minio://h:1/bkt?secure=maybe", bad: true},
		{in: "minio://h:1/bkt?secrue=false", bad: true},
		// A port out of range, and a parameter given twice (neither
		// value may silently win), are bad URLs, not servers to try.
		{in: "minio://127.0.0.1:99999/bkt", bad: true},
		{in: "minio://127.0.0.1:0/bkt", bad: true},
		{in: "minio://127.0.0.1:/bkt", bad: true},
		{in: "minio://127.0.0.1:9000/bkt?secure=false&secure=true", bad: true},
		{in: "minio://key:secret@h:1/bkt", bad: true},
		{in: "s3://b/ws", bad: true},
		{in: "minio://127.0.0.1:9000/bkt?timeout=10s&attempts=3", bucket: "bkt", opts: minio.Options{Endpoint: "127.0.0.1:9000", Secure: true, Timeout: 10 * time.Second, Attempts: 3}},
		{in: "minio://127.0.0.1:9000/bkt?timeout=soon", bad: true},
		{in: "minio://127.0.0.1:9000/bkt?attempts=x", bad: true},
		// Bucket names minio-go refuses before any request.
		{in: "minio://127.0.0.1:9000/b/ws", bad: true},
		{in: "minio://127.0.0.1:9000/" + strings.Repeat("b", 64), bad: true},
		{in: "minio://127.0.0.1:9000/10.0.0.1/ws", bad: true},
		{in: "minio://127.0.0.1:9000/bkt..x/ws", bad: true},
	} {
		u, err := url.Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if tc.opts.Timeout == 0 {
			tc.opts.Timeout, tc.opts.Attempts = timeout.DefaultTimeout, timeout.DefaultAttempts
		}
		bucket, prefix, opts, err := minio.ParseURL(u)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseURL(%s) succeeded, want an error", tc.in)
			}
			continue
		}
		if err != nil || bucket != tc.bucket || prefix != tc.prefix || opts != tc.opts {
			t.Errorf("ParseURL(%s) = %q, %q, %+v, %v; want %q, %q, %+v", tc.in, bucket, prefix, opts, err, tc.bucket, tc.prefix, tc.opts)
		}
	}
}

// TestOpenURL opens a store the way the root package does: from a URL,
// credentials from the environment (AWS_* first, MINIO_ROOT_* as fallback).
func TestOpenURL(t *testing.T) {
	ctx := context.Background()
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			b := srv.start(t)
			t.Setenv("AWS_ACCESS_KEY_ID", "")
			t.Setenv("AWS_SECRET_ACCESS_KEY", "")
			t.Setenv("MINIO_ROOT_USER", b.AccessKey)
			t.Setenv("MINIO_ROOT_PASSWORD", b.SecretKey)
			u, _ := url.Parse("minio://" + b.Host + "/" + b.Name + "/ws/url?secure=false")
			s, err := minio.OpenURL(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Put(ctx, "k", []byte("via url"), cas.PutOptions{IfAbsent: true}); err != nil {
				t.Fatalf("Put with MINIO_ROOT_* credentials: %v", err)
			}
			t.Setenv("MINIO_ROOT_USER", "wrong")
			t.Setenv("AWS_ACCESS_KEY_ID", b.AccessKey)
			t.Setenv("AWS_SECRET_ACCESS_KEY", b.SecretKey)
			if s, err = minio.OpenURL(ctx, u); err != nil {
				t.Fatal(err)
			}
			if got, err := s.Get(ctx, "k", 0, -1); err != nil || string(got) != "via url" {
				t.Fatalf("Get with AWS_* credentials = %q, %v", got, err)
			}
			t.Setenv("AWS_ACCESS_KEY_ID", "")
			t.Setenv("MINIO_ROOT_USER", "")
			if _, err := minio.OpenURL(ctx, u); err == nil {
				t.Fatal("OpenURL without credentials succeeded")
			}
		})
	}
}

// TestRetryOverLostResponses runs the conformance suite through the
// retry wrapper while a third of all responses are lost on the wire:
// conditional creates that landed must not come back as conflicts.
func TestRetryOverLostResponses(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			b := srv.start(t)
			l := castest.NewLossyTransport(0.3, 1)
			castest.RunThroughFaults(t, l, func(t *testing.T, n int) cas.Store {
				return open(t, b, fmt.Sprintf("lossy-%d", n), l)
			})
		})
	}
}

// TestListPages pages through a listing a few keys at a time: every key
// once, in order, from the right start, one request per page.
func TestListPages(t *testing.T) {
	ctx := context.Background()
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			b := srv.start(t)
			c := castest.NewCountingTransport()
			s := open(t, b, "pages", c)
			s.SetPageSize(4)
			var want []string
			for i := 0; i < 25; i++ {
				k := fmt.Sprintf("l/%03d", i)
				if err := s.Put(ctx, k, nil, cas.PutOptions{}); err != nil {
					t.Fatal(err)
				}
				if i >= 5 {
					want = append(want, k)
				}
			}
			s.Put(ctx, "m/other", nil, cas.PutOptions{})
			var got []string
			before := c.Requests()
			err := s.List(ctx, "l/", "l/004", func(i cas.Info) error { got = append(got, i.Key); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("paged List = %v, want %v", got, want)
			}
			// 20 keys at 4 a page: 5 full pages, and a 6th request may be
			// needed to learn that the 5th was the last.
			if n := c.Requests() - before; n < 5 || n > 6 {
				t.Fatalf("paged List made %d requests, want 5 or 6", n)
			}
		})
	}
}
