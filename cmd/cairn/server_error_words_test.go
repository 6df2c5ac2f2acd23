package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// errorServer is an S3 endpoint that answers every request with status
// and the S3 error code, as a failing or overloaded server does.
func errorServer(t *testing.T, status int, code string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(status)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>We encountered an internal error, please try again.</Message><Key>%s</Key><RequestId>17</RequestId></Error>`, code, r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestServerErrorSaidInWords: a store that answers every request with a
// server error (500 InternalError, 503 SlowDown) is said in words after
// the retries: the store as given, that it answered with a server error
// and which, after how many attempts, and what went undone; never the
// store key or the SDK's text. It is cairn.ErrUnavailable, exit 1, HTTP
// 503 "unavailable". It was the SDK's text around a key: "commit s: find
// head of s: after 2 attempts: get steps/s/head: operation error S3:
// GetObject, https response error StatusCode: 500, RequestID: 17, …, api
// error InternalError: We encountered an internal error, …".
func TestServerErrorSaidInWords(t *testing.T) {
	noAWS(t)
	for _, c := range []struct {
		status int
		code   string
	}{{500, "InternalError"}, {503, "SlowDown"}, {503, "ServiceUnavailable"}} {
		addr := errorServer(t, c.status, c.code)
		want := fmt.Sprintf("answered with a server error (HTTP %d %s)", c.status, c.code)
		for scheme, url := range map[string]string{
			"s3":    "s3://bkt/ws?endpoint=http://" + addr + "&attempts=2",
			"minio": "minio://" + addr + "/bkt/ws?secure=false&attempts=2",
		} {
			t.Run(fmt.Sprintf("%s %d %s", scheme, c.status, c.code), func(t *testing.T) {
				t.Setenv("AWS_ACCESS_KEY_ID", "cairn-test")
				t.Setenv("AWS_SECRET_ACCESS_KEY", "cairn-test-secret")
				testUnavailableWords(t, url, want, ", after 2 attempts: ")
			})
		}
	}
}
