package httpapi

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
)

// TestOptionsAsteriskIsNoBypass: "OPTIONS * HTTP/1.1" was answered by
// net/http itself, 200 with no body, before the server's handler ran:
// with a token, the one request a client without it got anything but
// the 401 every other request gets, and in no shape of the API's. It
// goes through the handler now: 401 without the token, and with it 404
// no_route in the API's error shape (no route takes "*").
func TestOptionsAsteriskIsNoBypass(t *testing.T) {
	const token = "secret-token"
	addr, _, _ := serveLoopback(t, New(cairn.OpenStore(memStore()), Options{Token: token}))
	for _, tc := range []struct {
		name, auth string
		status     int
		code       string
	}{
		{"without the token", "", http.StatusUnauthorized, "unauthorized"},
		{"with the token", "Authorization: Bearer " + token + "\r\n", http.StatusNotFound, "no_route"},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(30 * time.Second)) // a guard, not a measurement
		io.WriteString(conn, "OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n"+tc.auth+"\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s: no answer: %v", tc.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		conn.Close()
		var e errorBody
		if resp.StatusCode != tc.status || json.Unmarshal(b, &e) != nil || e.Code != tc.code {
			t.Errorf("OPTIONS *, %s: %d %q; want %d %s in the API's error shape", tc.name, resp.StatusCode, b, tc.status, tc.code)
		}
	}
}
