package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestNoRouteIsNotASessionWithoutSteps: a path no route takes (a client
// whose URL has a wrong path prefix, say) was 404 with the code
// not_found, the same answer as a session with no steps, so a client's
// head() took it for a new session. It is 404 with the code no_route.
func TestNoRouteIsNotASessionWithoutSteps(t *testing.T) {
	c, _ := newChecker(t, Options{})
	for _, p := range []string{"/prefix/v1/sessions/s/head", "/v2/sessions", "/v1/sessions/s/nope"} {
		status, b, _ := c.send("GET", p, "", nil, "")
		if status != http.StatusNotFound {
			t.Fatalf("GET %s: %d %s; want 404", p, status, b)
		}
		c.check("GET", p, status, b) // the API's Error shape, with a code openapi.json lists
		var body map[string]any
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatal(err)
		}
		if body["code"] != "no_route" || body["error"] != "no route GET "+p {
			t.Errorf("GET %s: %s; want code no_route, error \"no route GET %s\"", p, b, p)
		}
	}
	// A session with no steps is still not_found.
	if body := c.do("GET", "/v1/sessions/s/head", "", 404); body["code"] != "not_found" {
		t.Errorf("head of a session with no steps: %v; want not_found", body)
	}
}

// TestConnectIsNoRoute: CONNECT host:port, which has no path, was a 400
// saying "path : empty, '.' and '..' segments are not taken". It is the
// 404 no_route of any request no route takes, saying the server is no
// proxy.
func TestConnectIsNoRoute(t *testing.T) {
	ts := httptest.NewServer(New(cairn.OpenStore(memStore()), Options{}))
	t.Cleanup(ts.Close)
	status, body, _ := rawRequest(t, ts.Listener.Addr().String(), "CONNECT 127.0.0.1:80 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	if status != http.StatusNotFound || !strings.Contains(body, `"code":"no_route"`) || !strings.Contains(body, "no route CONNECT 127.0.0.1:80: this server is no proxy") {
		t.Errorf("CONNECT: %d %s; want 404 no_route saying the server is no proxy", status, body)
	}
}
