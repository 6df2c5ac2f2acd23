package httpapi

import (
	"encoding/json"
	"net/http"
	"testing"
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
