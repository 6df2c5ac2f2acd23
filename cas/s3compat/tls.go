package s3compat

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/cairnlog/cairn/cas/timeout"
)

// errSpeaksTLS is the cause of a plain HTTP request to a server that
// speaks only HTTPS (see PlainHTTPClient).
var errSpeaksTLS = errors.New("the server speaks HTTPS, not plain HTTP")

// tlsWhy says a TLS failure of a request in words, to follow the
// store's URL, with which URL parameter or variable to change; "" if err
// is none.
func tlsWhy(err error) string {
	const overHTTPS = "could not be reached over HTTPS ("
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	switch {
	case errors.Is(err, errSpeaksTLS):
		return "could not be reached over plain HTTP (the server speaks HTTPS: drop secure=false from a minio:// URL, or give an https:// endpoint= in an s3:// URL)"
	case errors.Is(err, http.ErrSchemeMismatch):
		return overHTTPS + "the server speaks plain HTTP: set secure=false in a minio:// URL, or give an http:// endpoint= in an s3:// URL)"
	case errors.As(err, &unknown):
		return overHTTPS + "the server's certificate is signed by an unknown authority: add that authority's certificate to $AWS_CA_BUNDLE on s3://, or to $SSL_CERT_FILE on minio://)"
	case errors.As(err, &host):
		return overHTTPS + fmt.Sprintf("the server's certificate is not valid for %q: check the host in the store URL)", host.Host)
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return overHTTPS + "the server's certificate has expired or is not yet valid)"
	case errors.As(err, &invalid), errors.As(err, &verify):
		return overHTTPS + "the server's certificate could not be verified)"
	}
	return ""
}

// PlainHTTPClient wraps the client of a store reached over plain HTTP
// so that a server that speaks only HTTPS is said as such: when a
// request fails the way a TLS server fails a plain HTTP request (the
// connection reset or closed before a response, a malformed response,
// or a 400 that is no S3 error reply), one TLS handshake with its host
// tells whether it speaks TLS, and if so the request's error is that
// (Unavailable says it in words), not retried. Other requests pass as
// they are; the check costs a connection only on such a failure.
func PlainHTTPClient(next timeout.Doer) timeout.Doer { return plainDoer{next} }

// PlainHTTPTransport is PlainHTTPClient for an http.RoundTripper.
func PlainHTTPTransport(next http.RoundTripper) http.RoundTripper { return plainTransport{next} }

type plainDoer struct{ next timeout.Doer }

func (d plainDoer) Do(r *http.Request) (*http.Response, error) {
	resp, err := d.next.Do(r)
	return checkPlain(r, resp, err)
}

type plainTransport struct{ next http.RoundTripper }

func (t plainTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	return checkPlain(r, resp, err)
}

// checkPlain returns a request's response and error as they are, unless
// they look like a TLS server's answer to plain HTTP and its host speaks
// TLS.
func checkPlain(r *http.Request, resp *http.Response, err error) (*http.Response, error) {
	switch {
	case err != nil:
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, syscall.ECONNRESET) &&
			!strings.Contains(err.Error(), "malformed HTTP response") {
			return resp, err
		}
	case resp.StatusCode != http.StatusBadRequest || strings.Contains(resp.Header.Get("Content-Type"), "xml"):
		return resp, err
	}
	if r.URL.Scheme != "http" || !speaksTLS(r.Context(), r.URL.Host) {
		return resp, err
	}
	if resp != nil {
		resp.Body.Close()
	}
	return nil, fmt.Errorf("%s %s: %w", r.Method, r.URL.Host, errSpeaksTLS)
}

// speaksTLS reports whether a TLS handshake with host succeeds within a
// few seconds. The certificate is not checked: nothing is sent over the
// connection, whose only use is to learn the protocol the server speaks.
func speaksTLS(ctx context.Context, host string) bool {
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "80")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // a probe of the protocol; no data is sent
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
