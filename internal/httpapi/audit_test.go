package httpapi

import (
	"bufio"
	"context"
	"errors"
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

// TestRefusedCommitSaysOnlyWhy: a patch that does not apply is refused
// before anything is written, so the answer names the operation and
// does not claim the step may have been written.
func TestRefusedCommitSaysOnlyWhy(t *testing.T) {
	c, _ := newChecker(t, Options{MaxBody: 1 << 20, PollInterval: 20 * time.Millisecond})
	c.do("POST", "/v1/sessions/p/steps", `{"state":{"a":{"b":1}}}`, 201)
	for _, body := range []string{
		`{"patch":[{"op":"remove","path":"/nope"}]}`,
		`{"patch":[{"op":"test","path":"/a/b","value":2}]}`,
	} {
		bad := c.do("POST", "/v1/sessions/p/steps", body, 400)
		if msg, _ := bad["error"].(string); !strings.Contains(msg, "patch op 1") || strings.Contains(msg, "may have been written") {
			t.Errorf("%s: error %q, want the failed operation and nothing else", body, msg)
		}
	}
	bad := c.do("POST", "/v1/sessions/new/steps", `{"patch":[{"op":"add","path":"/x","value":1}]}`, 400)
	if msg, _ := bad["error"].(string); strings.Contains(msg, "may have been written") {
		t.Errorf("patch of a new session: error %q claims the step may have been written", msg)
	}
}

// TestNonUTF8Refused: JSON is UTF-8 (RFC 8259). A state, patch, record or
// reply holding other bytes would be stored and then served back as a
// response no strict JSON reader can parse; it is refused with 400
// naming the field, and nothing is committed.
func TestNonUTF8Refused(t *testing.T) {
	c, _ := newChecker(t, Options{MaxBody: 1 << 20, PollInterval: 20 * time.Millisecond})
	c.do("POST", "/v1/sessions/u/steps", `{"state":{"a":"ok"}}`, 201)
	for _, tc := range []struct{ path, body, field string }{
		{"/v1/sessions/u/steps", "{\"state\":{\"a\":\"\xff\"}}", "state"},
		{"/v1/sessions/u/steps", "{\"state\":{\"a\":1},\"record\":{\"note\":\"\xc3\"}}", "record"},
		{"/v1/sessions/u/steps", "{\"patch\":[{\"op\":\"add\",\"path\":\"/b\",\"value\":\"\xfe\"}]}", "patch"},
		{"/v1/sessions/u/reply", "{\"input\":{\"ok\":\"\xff\"}}", "input"},
	} {
		if tc.field == "input" {
			c.do("POST", "/v1/sessions/u/steps", `{"state":{"a":"ok"},"status":"awaiting_input"}`, 201)
		}
		bad := c.do("POST", tc.path, tc.body, 400)
		if msg, _ := bad["error"].(string); !strings.HasPrefix(msg, tc.field+":") || !strings.Contains(msg, "UTF-8") {
			t.Errorf("%s %q: error %q, want one naming %s and UTF-8", tc.path, tc.body, msg, tc.field)
		}
	}
	if head := c.do("GET", "/v1/sessions/u/head", "", 200); head["step"].(interface{ String() string }).String() != "2" {
		t.Fatalf("a refused body committed: head %v", head["step"])
	}
}

// TestSlowBodyTimesOut: a client that sends its headers and then trickles
// (or stops sending) its body holds a connection and a goroutine for as
// long as it likes; the server now gives a body BodyTimeout to arrive and
// answers 408 after it, committing nothing. A body that arrives in time
// commits as before.
func TestSlowBodyTimesOut(t *testing.T) {
	ws := cairn.OpenStore(memStore())
	ts := httptest.NewServer(New(ws, Options{BodyTimeout: 200 * time.Millisecond}))
	t.Cleanup(ts.Close)
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A guard against a server that never answers, not a measurement.
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	body := `{"state":{"a":1}}`
	fmt.Fprintf(conn, "POST /v1/sessions/slow/steps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body[:5])
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "request body") {
		t.Fatalf("stalled body: %d %s, want 408 naming the request body", resp.StatusCode, b)
	}
	s, err := ws.Session("slow")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Head(context.Background()); !errors.Is(err, cairn.ErrNotFound) {
		t.Fatalf("a stalled body committed: %v", err)
	}
	c, _ := newChecker(t, Options{BodyTimeout: 200 * time.Millisecond})
	c.do("POST", "/v1/sessions/fast/steps", body, 201)
}

// TestBodyEncodingRefused: a body declared in another charset or
// compressed was read as plain UTF-8 all the same: a gzip body failed as
// "not valid JSON", and a UTF-16 or Latin-1 one was stored as bytes it
// did not mean. Both are 415 now, saying what to send; nothing commits.
func TestBodyEncodingRefused(t *testing.T) {
	c, _ := newChecker(t, Options{MaxBody: 1 << 20, PollInterval: 20 * time.Millisecond})
	for _, h := range []map[string][]string{
		{"Content-Type": {"application/json; charset=utf-16"}},
		{"Content-Type": {"application/json; charset=iso-8859-1"}},
		{"Content-Encoding": {"gzip"}},
	} {
		bad := c.doWith("POST", "/v1/sessions/e/steps", `{"state":{"a":1}}`, h, 415)
		if msg, _ := bad["error"].(string); !strings.Contains(msg, "UTF-8") && !strings.Contains(msg, "uncompressed") {
			t.Errorf("%v: error %q, want what to send", h, msg)
		}
	}
	c.doWith("POST", "/v1/sessions/e/steps", `{"state":{"a":1}}`, map[string][]string{"Content-Type": {"application/json; charset=UTF-8"}}, 201)
	c.do("GET", "/v1/sessions/e/steps/1", "", 200)
	c.do("GET", "/v1/sessions/e/steps/2", "", 404)
}
