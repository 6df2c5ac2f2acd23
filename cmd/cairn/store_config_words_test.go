package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/s3test"
)

// TestUnconfiguredStoreSaidInWords: an s3:// store with no region and
// no endpoint anywhere (URL, environment, profile), and a minio:// store
// with no credentials in the environment, fail before any request,
// saying what is missing and where cairn looks for it: the Go API's Open
// (cairn.ErrUnavailable), each command and `cairn serve` (exit 1, one
// line). They were the SDK's text around a store key ("commit s: find
// head of s: get steps/s/head: operation error S3: GetObject, resolve
// auth scheme: resolve endpoint: endpoint rule error, Invalid region:
// region was not a valid DNS name.") and "open minio store: no
// credentials: …", which named no store and was of no API kind.
func TestUnconfiguredStoreSaidInWords(t *testing.T) {
	// A server that no request may reach.
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	for _, c := range []struct {
		label, url, want string
		env              map[string]string
	}{
		{"s3 without a region", "s3://bkt/ws",
			"could not be used: no AWS region was found (set region= in the store URL, or AWS_REGION, or the profile's region; for an S3-compatible server, give its endpoint=)",
			map[string]string{"AWS_ACCESS_KEY_ID": "cairn-test", "AWS_SECRET_ACCESS_KEY": "cairn-test-secret"}},
		{"minio without credentials", "minio://" + host + "/bkt/ws?secure=false",
			"could not be used: no credentials were found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or MINIO_ROOT_USER and MINIO_ROOT_PASSWORD; see docs/s3.md)",
			nil},
		{"minio without a secret key", "minio://" + host + "/bkt/ws?secure=false",
			"could not be used: no secret key was found for the access key (set AWS_SECRET_ACCESS_KEY beside AWS_ACCESS_KEY_ID, or MINIO_ROOT_PASSWORD beside MINIO_ROOT_USER)",
			map[string]string{"MINIO_ROOT_USER": "cairn-test"}},
	} {
		t.Run(c.label, func(t *testing.T) {
			noAWS(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			want := "the store " + c.url + " " + c.want
			_, err := cairn.Open(context.Background(), c.url)
			if !errors.Is(err, cairn.ErrUnavailable) || err.Error() != want {
				t.Errorf("Open: %v; want %q, ErrUnavailable", err, want)
			}
			for _, args := range [][]string{{"commit", "s", "-"}, {"log", "s"}, {"sessions"}, {"serve", "--listen", "127.0.0.1:0"}} {
				// A serve that started anyway stops when ctx ends.
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				var errb bytes.Buffer
				code := run(ctx, append([]string{"--store", c.url}, args...), strings.NewReader(`{"n":1}`), io.Discard, &errb)
				cancel()
				errs := errb.String()
				if line := "cairn " + args[0] + ": " + want + "\n"; code != 1 || errs != line {
					t.Errorf("cairn %s: exit %d, %q; want exit 1, %q", args[0], code, errs, line)
				}
			}
		})
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests reached the server; want none", n)
	}
}

// TestProfileEndpointDefaultsRegion: an endpoint given only by the
// shared config's profile (endpoint_url), with no region anywhere, is an
// S3-compatible server like one given in the URL or the environment: the
// region defaults to us-east-1 and the store works. Without it every
// request failed with the SDK's "Invalid region: region was not a valid
// DNS name".
func TestProfileEndpointDefaultsRegion(t *testing.T) {
	b := s3test.StartMinIO(t)
	noAWS(t)
	config := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(config, []byte(fmt.Sprintf("[default]\nendpoint_url = %s\n", b.Endpoint)), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CONFIG_FILE", config)
	t.Setenv("AWS_ACCESS_KEY_ID", b.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", b.SecretKey)
	store := "s3://" + b.Name + "/profile?path_style=true"
	if out, errs, code := cli(t, store, `{"n":1}`, "commit", "s", "-"); code != 0 || !strings.HasPrefix(out, "s@1 ") {
		t.Errorf("commit: exit %d, %q, %s; want s@1", code, out, errs)
	}
}
