package httpapi

import (
	"strings"
	"testing"
)

// TestStepNotFoundSaysWhy: a step that is not there is a 404 that says
// why, as the Go API does: above the head, below a fork's first step, a
// removed session. It used to be one message for every case.
func TestStepNotFoundSaysWhy(t *testing.T) {
	c, _ := newChecker(t, Options{})
	for i := range 4 {
		c.do("POST", "/v1/sessions/p/steps", `{"state":{"n":`+string(rune('0'+i))+`}}`, 201)
	}
	c.do("POST", "/v1/sessions/p/fork", `{"to":"f","step":2}`, 201)
	for _, tc := range []struct{ path, want string }{
		{"/v1/sessions/p/steps/9", "head is step 4"},
		{"/v1/sessions/f/steps/1", "f was forked from p@2"},
	} {
		got := c.do("GET", tc.path, "", 404)
		if msg, _ := got["error"].(string); !strings.Contains(msg, tc.want) || strings.Contains(msg, "steps/") {
			t.Errorf("GET %s: error %q, want it to say %q", tc.path, msg, tc.want)
		}
	}
}
