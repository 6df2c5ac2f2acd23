package s3_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/castest"
	"github.com/cairnlog/cairn/cas/retry"
	"github.com/cairnlog/cairn/cas/s3"
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

func open(t testing.TB, b *s3test.Bucket, prefix string, hc *http.Client) *s3.Store {
	t.Helper()
	s, err := s3.Open(context.Background(), b.Name, prefix, s3.Options{
		Endpoint:    b.Endpoint,
		Region:      b.Region,
		PathStyle:   true,
		Credentials: credentials.NewStaticCredentialsProvider(b.AccessKey, b.SecretKey, ""),
		HTTPClient:  hc,
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

// TestPrefixConfines: stores on different prefixes of one bucket do not
// see each other's keys.
func TestPrefixConfines(t *testing.T) {
	ctx := context.Background()
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			b := srv.start(t)
			a, other, root := open(t, b, "team/a", nil), open(t, b, "team/ab", nil), open(t, b, "", nil)
			if err := a.Put(ctx, "k", []byte("a"), cas.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := other.Get(ctx, "k", 0, -1); !errors.Is(err, cas.ErrNotFound) {
				t.Fatalf("other prefix Get = %v, want ErrNotFound", err)
			}
			var keys []string
			collect := func(i cas.Info) error { keys = append(keys, i.Key); return nil }
			if err := other.List(ctx, "", "", collect); err != nil || len(keys) != 0 {
				t.Fatalf("other prefix List = %v, %v; want nothing", keys, err)
			}
			if err := root.List(ctx, "", "", collect); err != nil || fmt.Sprint(keys) != "[team/a/k]" {
				t.Fatalf("bucket root List = %v, %v; want [team/a/k]", keys, err)
			}
		})
	}
}

// TestRequestsPerCall: each store call is exactly one HTTP request; in
// particular one Put (plain or conditional, won or lost) is one PUT.
func TestRequestsPerCall(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			b := srv.start(t)
			c := castest.NewCountingTransport()
			s := open(t, b, "count", &http.Client{Transport: c})
			castest.OneRequestPerCall(t, s, c.Requests)
		})
	}
}

// TestNoSDKRetries: a server in trouble gets one request per call, and
// the error is classified for the retry wrapper.
func TestNoSDKRetries(t *testing.T) {
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
			s, err := s3.Open(context.Background(), "bucket", "p", s3.Options{
				Endpoint: srv.URL, PathStyle: true,
				Credentials: credentials.NewStaticCredentialsProvider("ak", "sk", ""),
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
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Setenv("AWS_ENDPOINT_URL_S3", "")
	for _, tc := range []struct {
		in             string
		bucket, prefix string
		opts           s3.Options
		bad            bool
	}{
		{in: "s3://b", bucket: "b"},
		{in: "s3://b/ws/one/", bucket: "b", prefix: "ws/one"},
		{in: "s3://b/ws?endpoint=http://127.0.0.1:9000", bucket: "b", prefix: "ws",
			opts: s3.Options{Endpoint: "http://127.0.0.1:9000", PathStyle: true}},
		{in: "s3://b/ws?endpoint=https://s3.example.com&path_style=false&region=eu-west-1", bucket: "b", prefix: "ws",
			opts: s3.Options{Endpoint: "https://s3.example.com", Region: "eu-west-1"}},
		{in: "s3://b?path_style=true", bucket: "b", opts: s3.Options{PathStyle: true}},
		{in: "s3:///ws", bad: true},
		{in: "s3://b/../x", bad: true},
		{in: "s3://b/ws?endpoint=127.0.0.1:9000", bad: true},
		{in: "s3://b/ws?endpiont=http://x", bad: true},
		// A port out of range, and a parameter given twice (neither
		// value may silently win), are bad URLs, not servers to try.
		{in: "s3://b/ws?endpoint=http://127.0.0.1:99999", bad: true},
		{in: "s3://b/ws?endpoint=http://127.0.0.1:0", bad: true},
		{in: "s3://b/ws?endpoint=http://127.0.0.1:", bad: true},
		{in: "s3://b/ws?endpoint=http://127.0.0.1:9000&region=us-east-1&region=eu-west-1", bad: true},
		{in: "s3://b/ws?path_style=true&path_style=false", bad: true},
		{in: "s3://key:secret@b/ws", bad: true},
		{in: "minio://b/ws", bad: true},
		{in: "s3://b?timeout=10s&attempts=3", bucket: "b", opts: s3.Options{Timeout: 10 * time.Second, Attempts: 3}},
		{in: "s3://b?timeout=0s", bad: true},
		{in: "s3://b?attempts=0", bad: true},
	} {
		u, err := url.Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if tc.opts.Timeout == 0 {
			tc.opts.Timeout, tc.opts.Attempts = timeout.DefaultTimeout, timeout.DefaultAttempts
		}
		bucket, prefix, opts, err := s3.ParseURL(u)
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
	t.Setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9000")
	if _, _, opts, _ := s3.ParseURL(&url.URL{Scheme: "s3", Host: "b"}); !opts.PathStyle {
		t.Error("with AWS_ENDPOINT_URL_S3 set, path_style should default to true")
	}
}

// TestOpenURL opens a store the way the root package does: from a URL,
// credentials and endpoint from the environment.
func TestOpenURL(t *testing.T) {
	ctx := context.Background()
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			b := srv.start(t)
			t.Setenv("AWS_ACCESS_KEY_ID", b.AccessKey)
			t.Setenv("AWS_SECRET_ACCESS_KEY", b.SecretKey)
			t.Setenv("AWS_REGION", "")
			t.Setenv("AWS_PROFILE", "")
			t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
			t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
			t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
			t.Setenv("AWS_ENDPOINT_URL", "")
			t.Setenv("AWS_ENDPOINT_URL_S3", "")
			u, _ := url.Parse("s3://" + b.Name + "/ws/url?endpoint=" + url.QueryEscape(b.Endpoint))
			s, err := s3.OpenURL(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Put(ctx, "k", []byte("via url"), cas.PutOptions{IfAbsent: true}); err != nil {
				t.Fatalf("Put via URL store: %v", err)
			}
			// The same store through AWS_ENDPOINT_URL_S3 and no endpoint parameter.
			t.Setenv("AWS_ENDPOINT_URL_S3", b.Endpoint)
			u, _ = url.Parse("s3://" + b.Name + "/ws/url")
			s, err = s3.OpenURL(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := s.Get(ctx, "k", 0, -1); err != nil || string(got) != "via url" {
				t.Fatalf("Get via AWS_ENDPOINT_URL_S3 = %q, %v", got, err)
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
				return open(t, b, fmt.Sprintf("lossy-%d", n), &http.Client{Transport: l})
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
			s := open(t, b, "pages", &http.Client{Transport: c})
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
