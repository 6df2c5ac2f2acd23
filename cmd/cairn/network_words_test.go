package main

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/httpapi"
)

// noAWS clears every AWS variable and points HOME at an empty directory,
// so that no credentials, profile or region of this machine's is found;
// it disables the instance metadata service, whose answer depends on the
// network the test runs on.
func noAWS(t *testing.T) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") || strings.HasPrefix(k, "MINIO_") || strings.HasPrefix(k, "CAIRN_S3_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// hungServer is a listener that accepts connections and never answers.
func hungServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// closedPort is a loopback address with nothing listening.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestUnreachableStoreSaidInWords: an s3:// or minio:// store that
// cannot be reached (nothing listening at its port, a host name that
// does not resolve, a server that never answers) or, on s3://, for which
// no credentials are found, is said in words through the Go API, the CLI
// and the HTTP API: the store as given, what failed, what went undone;
// never a store key, the SDK's text or a Go type. It is
// cairn.ErrUnavailable, exit 1, HTTP 503 "unavailable". It was the SDK's
// text around a key: "commit s: find head of s: after 2 attempts: get
// steps/s/head: operation error S3: GetObject, https response error
// StatusCode: 0, RequestID: , HostID: , request send failed, Get
// \"http://127.0.0.1:1/bkt/ws/steps/s/head?x-id=GetObject\": dial tcp
// 127.0.0.1:1: connect: connection refused"; and, with no credentials and
// an instance metadata service that answers 403, "refused the request:
// access denied (the credentials were accepted …)".
func TestUnreachableStoreSaidInWords(t *testing.T) {
	noAWS(t)
	closed, hung := closedPort(t), hungServer(t)
	const noHost = "cairn-no-such-host.invalid:9000"
	type tc struct {
		label, url, want, after string
		noCreds                 bool
	}
	var cases []tc
	for _, c := range []struct{ label, addr, query, want, after string }{
		{"nothing listening", closed, "attempts=2", "could not be reached (connection refused", ", after 2 attempts: "},
		{"no such host", noHost, "attempts=2", `could not be reached (no such host "cairn-no-such-host.invalid"`, ""},
		{"never answers", hung, "attempts=2&timeout=1s", "did not answer within 1s (set the timeout with ?timeout= or $CAIRN_S3_TIMEOUT)", ", after 2 attempts: "},
	} {
		cases = append(cases,
			tc{label: "s3: " + c.label, url: "s3://bkt/ws?endpoint=http://" + c.addr + "&" + c.query, want: c.want, after: c.after},
			tc{label: "minio: " + c.label, url: "minio://" + c.addr + "/bkt/ws?secure=false&" + c.query, want: c.want, after: c.after})
	}
	cases = append(cases, tc{label: "s3: no credentials", url: "s3://bkt/ws?endpoint=http://" + closed + "&attempts=2",
		want: "could not be used: no AWS credentials were found (set AWS_ACCESS_KEY_ID", noCreds: true})

	for _, c := range cases {
		t.Run(c.label, func(t *testing.T) {
			if !c.noCreds {
				t.Setenv("AWS_ACCESS_KEY_ID", "cairn-test")
				t.Setenv("AWS_SECRET_ACCESS_KEY", "cairn-test-secret")
			}
			testUnavailableWords(t, c.url, c.want, c.after)
		})
	}
}

// testUnavailableWords checks that a store that gives no usable answer
// is said in words through the Go API, the CLI and the HTTP API: every
// message starts with the store as given and then want, contains after,
// and ends with what went undone; no store key, SDK text or Go type; it
// is cairn.ErrUnavailable, exit 1, HTTP 503 "unavailable".
func testUnavailableWords(t *testing.T, url, want, after string) {
	t.Helper()
	ctx := context.Background()
	words := func(label, msg, prefix, suffix string) {
		t.Helper()
		if !strings.HasPrefix(msg, prefix+want) || !strings.Contains(msg, after) || !strings.HasSuffix(msg, suffix) ||
			storeWords.MatchString(msg) || sdkWords.MatchString(msg) || strings.Contains(msg, "dial tcp") {
			t.Errorf("%s: %q; want %q…%q…%q, and no store key or SDK text", label, msg, prefix+want, after, suffix)
		}
	}
	store := "the store " + url + " "

	// The Go API.
	ws, err := cairn.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ws.Session("s")
	_, err = s.Commit(ctx, cairn.JSON([]byte(`{"n":1}`)), cairn.CommitOptions{})
	if !errors.Is(err, cairn.ErrUnavailable) || errors.Is(err, cairn.ErrMaybeWritten) {
		t.Errorf("commit: %v; want ErrUnavailable, not ErrMaybeWritten", err)
	}
	if err != nil {
		words("commit", err.Error(), store, ": could not read the head hint of session s; the step was not written")
	}
	_, err = ws.SessionNames(ctx)
	if !errors.Is(err, cairn.ErrUnavailable) {
		t.Errorf("sessions: %v; want ErrUnavailable", err)
	}
	if err != nil {
		words("sessions", err.Error(), store, ": could not list the sessions")
	}

	// The CLI: one line, exit 1.
	for _, args := range [][]string{{"commit", "s", "-"}, {"log", "s"}, {"show", "s@1"}, {"sessions"}} {
		_, errs, code := cli(t, url, `{"n":1}`, args...)
		if code != 1 || strings.Count(errs, "\n") != 1 {
			t.Errorf("cairn %s: exit %d, %q; want exit 1 and one line", args[0], code, errs)
		}
		words("cairn "+args[0], strings.TrimSuffix(errs, "\n"), "cairn "+args[0]+": "+store, "")
	}

	// The HTTP API: 503, code "unavailable", the same words.
	srv := httptest.NewServer(httpapi.New(ws, httpapi.Options{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/v1/sessions")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Code, Error string }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || body.Code != "unavailable" {
		t.Errorf("GET /v1/sessions: %d %q %q; want 503 unavailable", resp.StatusCode, body.Code, body.Error)
	}
	words("GET /v1/sessions", body.Error, store, ": could not list the sessions")
}
