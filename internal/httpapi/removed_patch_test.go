package httpapi

import (
	"strings"
	"testing"
)

// TestPatchOnRemovedSessionHasNoState: a removed session has no state to
// patch, as a session that never had a step has none. A patch commit
// after DELETE applied to the removal's tombstone and acknowledged a new
// step whose state was null (`{"patch":[]}`), or whatever the patch's
// replace of "" made it: a state the client never sent, taken for the
// head it had patched before.
func TestPatchOnRemovedSessionHasNoState(t *testing.T) {
	c, _ := newChecker(t, Options{})
	c.do("POST", "/v1/sessions/r/steps", `{"state":{"v":1}}`, 201)
	c.do("POST", "/v1/sessions/r/steps", `{"state":{"v":2}}`, 201)
	c.do("DELETE", "/v1/sessions/r", "", 200)
	for _, patch := range []string{`[]`, `[{"op":"test","path":"","value":null}]`} {
		bad := c.do("POST", "/v1/sessions/r/steps", `{"patch":`+patch+`}`, 400)
		if msg, _ := bad["error"].(string); !strings.Contains(msg, "no state to patch") {
			t.Errorf("patch %s on a removed session: %v; want it to say the session has no state to patch", patch, bad)
		}
	}
	c.do("GET", "/v1/sessions/r/head", "", 404)
	// A whole state starts it again.
	c.do("POST", "/v1/sessions/r/steps", `{"state":{"v":3}}`, 201)
	c.do("POST", "/v1/sessions/r/steps", `{"patch":[{"op":"replace","path":"/v","value":4}]}`, 201)
}
