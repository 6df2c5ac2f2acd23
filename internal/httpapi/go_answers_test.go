package httpapi

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
)

// TestGoAnswersInTheAPIShape: a request Go's HTTP server cannot read (two
// Content-Length headers, headers over MaxHeaderBytes, no Host, a
// transfer coding it does not know, an Expect it does not meet, another
// HTTP version) it answered itself, before any handler ran, in plain
// text ("400 Bad Request"), which no client of the API could take for
// its error shape. Serve answers each in the API's shape now, with the
// same status.
func TestGoAnswersInTheAPIShape(t *testing.T) {
	addr, _, _ := serveLoopback(t, New(cairn.OpenStore(memStore()), Options{}))
	post := "POST /v1/sessions/s/steps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
	for _, tc := range []struct {
		name, req  string
		status     int
		code, want string
	}{
		{"two Content-Length headers", post + "Content-Length: 11\r\nContent-Length: 12\r\n\r\n{\"state\":1}", 400, "bad_request", "its head could not be read"},
		// Two that agree are one length (RFC 9112, 6.3), as Go reads them.
		{"two equal Content-Length headers", post + "Content-Length: 11\r\nContent-Length: 11\r\n\r\n{\"state\":1}", 201, "", ""},
		{"headers over the limit", "GET /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + strings.Repeat("x", 80<<10) + "\r\n\r\n", 431, "too_large", "over the server's limit of 64 KiB"},
		{"no Host", "GET /v1/sessions HTTP/1.1\r\n\r\n", 400, "bad_request", "missing required Host header"},
		{"an unknown transfer coding", post + "Transfer-Encoding: gzip\r\n\r\n", 501, "bad_request", "Transfer-Encoding"},
		{"an Expect not met", post + "Expect: 200-ok\r\nContent-Length: 11\r\n\r\n{\"state\":1}", 417, "bad_request", "Expect"},
		{"another HTTP version", "GET /v1/sessions HTTP/3.0\r\nHost: 127.0.0.1\r\n\r\n", 505, "bad_request", "HTTP version"},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(30 * time.Second)) // a guard, not a measurement
		go io.WriteString(conn, tc.req)                    // the server may answer before it has read it all
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s: no answer: %v", tc.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		conn.Close()
		var e errorBody
		if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" ||
			json.Unmarshal(b, &e) != nil || e.Code != tc.code || !strings.Contains(e.Error, tc.want) {
			t.Errorf("%s: %d %q %s; want %d %s in the API's error shape, saying %q", tc.name, resp.StatusCode, resp.Header.Get("Content-Type"), b, tc.status, tc.code, tc.want)
		}
	}
}
