package httpapi

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
)

// TestRefusalOfAnUnsentBodyIsAnswered: a request refused before its body
// is read (no token, a wrong Content-Type or Origin, a query parameter
// the route does not take, a method or path no route takes) was answered
// only once net/http had read the body to throw it away, with no
// deadline: a client that declared a body and sent none (DELETE with a
// Content-Length, a POST whose body never came) got no answer, and held
// its connection and a goroutine, for ever, where a body that stalls is
// otherwise cut off after StallTimeout. Each is now answered.
func TestRefusalOfAnUnsentBodyIsAnswered(t *testing.T) {
	const token = "secret-token"
	srv := New(cairn.OpenStore(memStore()), Options{Token: token, StallTimeout: 300 * time.Millisecond})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	auth := "Authorization: Bearer " + token + "\r\n"
	json := "Content-Type: application/json\r\n"
	cases := []struct {
		name, head string
		status     int
	}{
		{"no token", "POST /v1/sessions/s/steps HTTP/1.1\r\n" + json, http.StatusUnauthorized},
		{"DELETE without a Content-Type", "DELETE /v1/sessions/s HTTP/1.1\r\n" + auth, http.StatusUnsupportedMediaType},
		{"text/plain", "POST /v1/sessions/s/steps HTTP/1.1\r\n" + auth + "Content-Type: text/plain\r\n", http.StatusUnsupportedMediaType},
		{"another Origin", "POST /v1/sessions/s/steps HTTP/1.1\r\n" + auth + json + "Origin: http://example.com\r\n", http.StatusForbidden},
		{"an unknown parameter", "POST /v1/sessions/s/steps?x=1 HTTP/1.1\r\n" + auth + json, http.StatusBadRequest},
		{"no route", "POST /v1/sessions/s/nothing HTTP/1.1\r\n" + auth + json, http.StatusNotFound},
		{"a method the path does not take", "PUT /v1/sessions/s/steps HTTP/1.1\r\n" + auth + json, http.StatusMethodNotAllowed},
	}
	type sent struct {
		conn net.Conn
		r    *bufio.Reader
	}
	var conns []sent
	deadline := time.Now().Add(30 * time.Second) // for every answer; each is due after 300 ms
	for _, tc := range cases {
		for _, framing := range []string{"Content-Length: 100", "Transfer-Encoding: chunked"} {
			conn, err := net.Dial("tcp", ts.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			conn.SetDeadline(deadline)
			fmt.Fprintf(conn, "%sHost: 127.0.0.1\r\n%s\r\n\r\n", tc.head, framing) // and no body
			conns = append(conns, sent{conn, bufio.NewReader(conn)})
		}
	}
	i := 0
	for _, tc := range cases {
		for _, framing := range []string{"Content-Length: 100", "Transfer-Encoding: chunked"} {
			c := conns[i]
			i++
			resp, err := http.ReadResponse(c.r, nil)
			if err != nil {
				t.Errorf("%s, %s, its body never sent: no answer (%v)", tc.name, framing, err)
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(b), `"code"`) {
				t.Errorf("%s, %s, its body never sent: %d %s; want %d", tc.name, framing, resp.StatusCode, b, tc.status)
			}
		}
	}
}
