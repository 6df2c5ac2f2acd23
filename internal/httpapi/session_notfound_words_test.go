package httpapi

import (
	"strings"
	"testing"
)

// TestSessionNotFoundWords: a request on a session that has no steps, or
// that was removed, is a 404 that says so once, on every route that
// reads the session's head: "session x has no steps", "session r was
// removed". It said "head of x: not found: session has no steps", "not
// found" after the code not_found had said it, and the step route alone
// had it once.
func TestSessionNotFoundWords(t *testing.T) {
	c, _ := newChecker(t, Options{})
	c.do("POST", "/v1/sessions/p/steps", `{"state":{"n":1}}`, 201)
	c.do("POST", "/v1/sessions/r/steps", `{"state":{"n":1}}`, 201)
	c.do("DELETE", "/v1/sessions/r", "", 200)
	for _, tc := range []struct{ s, want string }{
		{"x", "session x has no steps"},
		{"r", "session r was removed"},
	} {
		for _, rt := range []struct{ method, path, body string }{
			{"GET", "/v1/sessions/" + tc.s + "/head", ""},
			{"GET", "/v1/sessions/" + tc.s + "/log", ""},
			{"POST", "/v1/sessions/" + tc.s + "/fork", `{"to":"f"}`},
			{"POST", "/v1/sessions/" + tc.s + "/reply", `{"input":{}}`},
			{"GET", "/v1/diff?a=" + tc.s + "&b=p", ""},
			{"GET", "/v1/diff?a=p&b=" + tc.s, ""},
		} {
			got := c.do(rt.method, rt.path, rt.body, 404)
			// A reply says what it was ("reply to r: session r was removed").
			if msg, _ := got["error"].(string); got["code"] != "not_found" || msg != tc.want && !strings.HasSuffix(msg, ": "+tc.want) || strings.Contains(msg, "not found") {
				t.Errorf("%s %s: %v; want not_found, %q", rt.method, rt.path, got, tc.want)
			}
		}
	}
	// A wait on a name with no steps waits for its first; on a removed
	// session it is said at once.
	if got := c.do("GET", "/v1/sessions/r/wait?after=0&timeout=0", "", 404); got["error"] != "session r was removed" {
		t.Errorf("wait on r: %v", got)
	}
	if got := c.do("GET", "/v1/sessions/x/steps/2", "", 404); got["error"] != "step x@2: session x has no steps" {
		t.Errorf("step x@2: %v", got)
	}
	for _, path := range []string{"/v1/sessions/x", "/v1/sessions/r"} {
		got := c.do("DELETE", path, "", 404)
		if msg, _ := got["error"].(string); strings.Contains(msg, "not found") {
			t.Errorf("DELETE %s: %v; want its reason said once", path, got)
		}
	}
}
