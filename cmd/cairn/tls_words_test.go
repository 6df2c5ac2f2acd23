package main

import (
	"io"
	"log"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/s3test"
)

// TestTLSMismatchSaidInWords: a store URL whose TLS setting does not fit
// the server is said in words through the Go API, the CLI and the HTTP
// API, naming the URL parameter to change, and is not retried: HTTPS
// (secure=true, the default; an https:// endpoint) to a plain HTTP
// MinIO or versitygw; HTTPS to a server whose certificate is signed by
// an unknown authority, or is for another host; plain HTTP (secure=false; an http:// endpoint)
// to an HTTPS server. The servers behind TLS are a real MinIO behind a
// TLS proxy (httptest.NewTLSServer). They were the SDK's text around a
// key: "get steps/s/head: operation error S3: GetObject, https response
// error StatusCode: 0, …, Get \"https://…/steps/s/head?x-id=GetObject\":
// http: server gave HTTP response to HTTPS client", "… tls: failed to
// verify certificate: x509: certificate signed by unknown authority";
// and, for plain HTTP to HTTPS, "did not answer (the connection was
// reset), after 2 attempts" or "refused the request: the server answered
// HTTP 400 400 Bad Request", whichever the race between the TLS
// server's 400 and its reset gave.
func TestTLSMismatchSaidInWords(t *testing.T) {
	noAWS(t)
	const (
		plainWant   = "could not be reached over HTTPS (the server speaks plain HTTP: set secure=false in a minio:// URL, or give an http:// endpoint= in an s3:// URL)"
		unknownWant = "could not be reached over HTTPS (the server's certificate is signed by an unknown authority: add that authority's certificate to $AWS_CA_BUNDLE on s3://, or to $SSL_CERT_FILE on minio://)"
		hostWant    = `could not be reached over HTTPS (the server's certificate is not valid for "localhost": check the host in the store URL)`
		tlsWant     = "could not be reached over plain HTTP (the server speaks HTTPS: drop secure=false from a minio:// URL, or give an https:// endpoint= in an s3:// URL)"
	)
	type tc struct{ label, url, want string }
	var cases []tc
	var creds *s3test.Bucket
	for _, srv := range s3test.Servers {
		b := srv.Start(t)
		if srv.Name == "minio" {
			creds = b
		}
		cases = append(cases,
			tc{"https to plain " + srv.Name + " s3", "s3://" + b.Name + "/tls?attempts=2&endpoint=https://" + b.Host, plainWant},
			tc{"https to plain " + srv.Name + " minio", "minio://" + b.Host + "/" + b.Name + "/tls?attempts=2", plainWant})
		if srv.Name != "minio" {
			continue
		}
		target, _ := url.Parse(b.Endpoint)
		px := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(target))
		px.Config.ErrorLog = log.New(io.Discard, "", 0) // each plain request is a "TLS handshake error"
		px.StartTLS()
		t.Cleanup(px.Close)
		tlsHost := strings.TrimPrefix(px.URL, "https://")
		// The proxy's certificate is for 127.0.0.1 and example.com, not
		// localhost; Go checks the host before the authority.
		localHost := strings.Replace(tlsHost, "127.0.0.1", "localhost", 1)
		cases = append(cases,
			tc{"unknown certificate s3", "s3://" + b.Name + "/tls?attempts=2&endpoint=https://" + tlsHost, unknownWant},
			tc{"unknown certificate minio", "minio://" + tlsHost + "/" + b.Name + "/tls?attempts=2", unknownWant},
			tc{"certificate for another host s3", "s3://" + b.Name + "/tls?attempts=2&endpoint=https://" + localHost, hostWant},
			tc{"certificate for another host minio", "minio://" + localHost + "/" + b.Name + "/tls?attempts=2", hostWant},
			tc{"http to https s3", "s3://" + b.Name + "/tls?attempts=2&endpoint=http://" + tlsHost, tlsWant},
			tc{"http to https minio", "minio://" + tlsHost + "/" + b.Name + "/tls?attempts=2&secure=false", tlsWant})
	}
	for _, c := range cases {
		t.Run(c.label, func(t *testing.T) {
			// The servers share their credentials' form, not their values:
			// each refuses the other's, which these requests never reach.
			t.Setenv("AWS_ACCESS_KEY_ID", creds.AccessKey)
			t.Setenv("AWS_SECRET_ACCESS_KEY", creds.SecretKey)
			testUnavailableWords(t, c.url, c.want, "): could not ") // not ", after 2 attempts"
		})
	}
}
