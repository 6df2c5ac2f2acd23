package httpapi

import (
	"strings"
	"testing"
)

// TestRemoveWithBodyRemovesNothing: DELETE /v1/sessions/{s} read no
// body, so one sent to narrow it ({"expect":1}: only if the head is
// still step 1) was dropped without a word and the session removed
// whatever its head. A DELETE with a body is a 400 now, and the session
// is left as it was.
func TestRemoveWithBodyRemovesNothing(t *testing.T) {
	c, _ := newChecker(t, Options{})
	c.do("POST", "/v1/sessions/keep/steps", `{"state":1}`, 201)
	c.do("POST", "/v1/sessions/keep/steps", `{"state":2}`, 201)
	got := c.do("DELETE", "/v1/sessions/keep", `{"expect":1}`, 400)
	if msg, _ := got["error"].(string); !strings.Contains(msg, "takes none; nothing was removed") {
		t.Errorf("DELETE with a body: error %q", msg)
	}
	if head := c.do("GET", "/v1/sessions/keep/head", "", 200); head["step"] == nil {
		t.Errorf("the session after a refused DELETE: %v", head)
	}
	c.do("DELETE", "/v1/sessions/keep", "", 200)
}
