package httpapi

import "testing"

// TestNotFoundWordsFromTheError: a 404 for a session, or a step of it,
// that is not there says the Go API's cairn.NotFoundError, read with
// errors.As, not its text matched with patterns; a DELETE says it once,
// as the other routes do: "session x has no steps", not "remove x:
// session x has no steps".
func TestNotFoundWordsFromTheError(t *testing.T) {
	c, _ := newChecker(t, Options{})
	c.do("POST", "/v1/sessions/p/steps", `{"state":{"n":1}}`, 201)
	c.do("POST", "/v1/sessions/r/steps", `{"state":{"n":1}}`, 201)
	c.do("DELETE", "/v1/sessions/r", "", 200)
	for _, tc := range []struct{ method, path, want string }{
		{"DELETE", "/v1/sessions/x", "session x has no steps"},
		{"DELETE", "/v1/sessions/r", "session r was removed"},
		{"GET", "/v1/sessions/x/head", "session x has no steps"},
		{"GET", "/v1/sessions/r/head", "session r was removed"},
		{"GET", "/v1/sessions/x/steps/2", "step x@2: session x has no steps"},
		{"GET", "/v1/sessions/r/steps/9", "step r@9: the session was removed"},
		{"GET", "/v1/sessions/p/steps/9", "step p@9: the session's head is step 1"},
	} {
		if got := c.do(tc.method, tc.path, "", 404); got["code"] != "not_found" || got["error"] != tc.want {
			t.Errorf("%s %s: %v; want not_found, %q", tc.method, tc.path, got, tc.want)
		}
	}
}
