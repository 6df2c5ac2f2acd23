package httpapi

import (
	"net/http"
	"testing"
)

// TestWrongMethodIs405WhateverItsBody: a route's path under a method it
// does not take is 405 with Allow, as documented, whatever the request's
// Content-Type. `curl -X POST .../v1/inbox` (no body, so no JSON
// Content-Type) was 415 "send the request body as Content-Type:
// application/json", and the same request with JSON then 405: the user
// was sent to fix the wrong thing.
func TestWrongMethodIs405WhateverItsBody(t *testing.T) {
	c, _ := newChecker(t, Options{})
	for _, m := range []struct {
		method, path, allow string
		hdr                 http.Header
	}{
		{"POST", "/v1/inbox", "GET, HEAD", http.Header{}},
		{"PUT", "/v1/sessions/s/steps", "POST", http.Header{}},
		{"PATCH", "/v1/sessions/s", "DELETE", http.Header{"Content-Type": {"text/plain"}}},
		{"DELETE", "/v1/sessions/s/head", "GET, HEAD", http.Header{"Content-Type": {"text/plain"}}},
	} {
		status, b, h := c.send(m.method, m.path, "x", m.hdr, "")
		if status != http.StatusMethodNotAllowed || h.Get("Allow") != m.allow {
			t.Errorf("%s %s: %d, Allow %q, %s; want 405 with Allow: %s", m.method, m.path, status, h.Get("Allow"), b, m.allow)
			continue
		}
		c.check(m.method, m.path, status, b)
	}
	// A route that takes the method still wants JSON.
	if status, b, _ := c.send("POST", "/v1/sessions/s/steps", `{"state":1}`, http.Header{"Content-Type": {"text/plain"}}, ""); status != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain commit: %d %s; want 415", status, b)
	}
}
