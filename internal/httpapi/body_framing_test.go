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

// TestBrokenBodyFramingSaidSo: a body whose bytes could not be read
// whole (chunk sizes that are no hex numbers, or a chunked body cut off
// before its last chunk) was a 400 saying "request body is not valid
// JSON" of a valid JSON body. It says what is wrong now, and nothing is
// committed.
func TestBrokenBodyFramingSaidSo(t *testing.T) {
	ws := cairn.OpenStore(memStore())
	ts := httptest.NewServer(New(ws, Options{}))
	t.Cleanup(ts.Close)
	body := `{"state":{"a":1}}`
	for _, tc := range []struct {
		name, framing, says string
		cut                 bool // the client closes its side after it
	}{
		{"a chunk size that is no hex number", fmt.Sprintf("zz\r\n%s\r\n0\r\n\r\n", body), "framing is broken", false},
		{"a chunked body cut off", fmt.Sprintf("%x\r\n%s", len(body)+5, body), "ended before all of it arrived", true},
	} {
		conn, err := net.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(30 * time.Second)) // a guard, not a measurement
		fmt.Fprintf(conn, "POST /v1/sessions/framed/steps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%s", tc.framing)
		if tc.cut {
			conn.(*net.TCPConn).CloseWrite()
		}
		r, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b, _ := io.ReadAll(r.Body)
		conn.Close()
		if r.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), tc.says) || strings.Contains(string(b), "not valid JSON") {
			t.Errorf("%s: %d %s; want 400 saying %q", tc.name, r.StatusCode, b, tc.says)
		}
	}
	resp, err := http.Get(ts.URL + "/v1/sessions/framed/head")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("the session after bodies that could not be read: %s; want 404, no step", resp.Status)
	}
}
