package httpapi

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestWrongRouteNamesPathAsSent: a path with an escaped slash in a
// session's place (/v1/sessions/s%2Fhead) was refused naming the path
// decoded, "GET /v1/sessions/s/head: this path takes DELETE", a route
// that does take GET: the client could not see what was wrong. The 405
// and the 404 no_route name the path as sent.
func TestWrongRouteNamesPathAsSent(t *testing.T) {
	c, _ := newChecker(t, Options{})
	for _, tc := range []struct {
		path   string
		status int
		want   string
	}{
		{"/v1/sessions/s%2Fhead", 405, "GET /v1/sessions/s%2Fhead: this path takes DELETE"},
		{"/v1/sessions/s%2Fhead/x/y", 404, "no route GET /v1/sessions/s%2Fhead/x/y"},
	} {
		status, b, _ := c.send("GET", tc.path, "", http.Header{}, "")
		var e map[string]any
		_ = json.Unmarshal(b, &e)
		if status != tc.status || e["error"] != tc.want {
			t.Errorf("GET %s: %d %s; want %d %q", tc.path, status, b, tc.status, tc.want)
		}
	}
}
