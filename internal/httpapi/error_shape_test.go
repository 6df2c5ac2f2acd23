package httpapi

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestErrorsOutsideRoutesAreTheAPIShape: every error the server answers
// itself, not only a route's, is the documented {code, error} with the
// documented status. A wrong method on a route's path was 404 "no
// route" (now 405 with Allow, as HTTP has it), and a body that did not
// arrive in time was 408 with the code "timeout", which openapi.json's
// Error did not list. An unknown route, a body over the limit (declared
// or not) and a body that is not JSON were already so, and stay so.
func TestErrorsOutsideRoutesAreTheAPIShape(t *testing.T) {
	c, _ := newChecker(t, Options{MaxBody: 1 << 10, BodyTimeout: 200 * time.Millisecond})
	jsonCT := http.Header{"Content-Type": {"application/json"}}
	for _, m := range []struct {
		method, path, allow string
	}{
		{"PUT", "/v1/sessions/s/steps", "POST"},
		{"GET", "/v1/sessions/s/steps", "POST"},
		{"POST", "/v1/sessions", "GET, HEAD"},
		{"DELETE", "/v1/sessions/s/head", "GET, HEAD"},
		{"PATCH", "/v1/sessions/s", "DELETE"},
		{"OPTIONS", "/v1/inbox", "GET, HEAD"},
	} {
		status, b, h := c.send(m.method, m.path, "{}", jsonCT, "")
		if status != http.StatusMethodNotAllowed || h.Get("Allow") != m.allow {
			t.Errorf("%s %s: %d, Allow %q, %s; want 405 with Allow: %s", m.method, m.path, status, h.Get("Allow"), b, m.allow)
			continue
		}
		c.check(m.method, m.path, status, b)
	}
	for _, p := range []string{"/v2/sessions", "/v1/sessions/s/nope", "/v1/sessions/", "/v1/sessions/s/steps/1/x"} {
		status, b, _ := c.send("GET", p, "", nil, "")
		if status != http.StatusNotFound {
			t.Errorf("GET %s: %d %s; want 404", p, status, b)
			continue
		}
		c.check("GET", p, status, b)
	}
	c.do("POST", "/v1/sessions/s/steps", `{"state":`, 400)
	c.do("POST", "/v1/sessions/s/steps", `{"state":"`+strings.Repeat("x", 2<<10)+`"}`, 413)

	// Raw requests: a chunked body over the limit, and a body that stops.
	addr := strings.TrimPrefix(c.base, "http://")
	for _, r := range []struct {
		name, req string
		status    int
	}{
		{"chunked body over the limit", "Transfer-Encoding: chunked\r\n\r\n800\r\n" + strings.Repeat("x", 2048) + "\r\n0\r\n\r\n", 413},
		{"body that stops", "Content-Length: 20\r\n\r\n{\"sta", 408},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		// A guard against a server that never answers, not a measurement.
		conn.SetDeadline(time.Now().Add(30 * time.Second))
		fmt.Fprintf(conn, "POST /v1/sessions/s/steps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n%s", r.req)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s: no answer: %v", r.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		conn.Close()
		if resp.StatusCode != r.status || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %q %s; want %d in JSON", r.name, resp.StatusCode, resp.Header.Get("Content-Type"), b, r.status)
			continue
		}
		c.check("POST", "/v1/sessions/s/steps", resp.StatusCode, bytes.TrimSpace(b))
	}
}
