package httpapi

import (
	"strings"
	"testing"
	"time"
)

// TestCommitPatch: a commit body with a patch changes the head's
// document; a patch that fails answers 400 naming the operation and
// commits nothing; state and patch together are refused.
func TestCommitPatch(t *testing.T) {
	c, _ := newChecker(t, Options{MaxBody: 1 << 20, PollInterval: 20 * time.Millisecond})
	c.do("POST", "/v1/sessions/p/steps", `{"state":{"messages":["a"],"n":1}}`, 201)
	c.do("POST", "/v1/sessions/p/steps", `{"patch":[{"op":"add","path":"/messages/-","value":"b"},{"op":"replace","path":"/n","value":2}],"expect":1}`, 201)
	head := c.do("GET", "/v1/sessions/p/head", "", 200)
	if s := head["state"].(map[string]any); len(s["messages"].([]any)) != 2 {
		t.Fatalf("head after patch = %v", head["state"])
	}
	bad := c.do("POST", "/v1/sessions/p/steps", `{"patch":[{"op":"remove","path":"/messages/7"}]}`, 400)
	if msg, _ := bad["error"].(string); !strings.Contains(msg, "patch op 1 (remove /messages/7): no element 7 (the array has 2)") {
		t.Fatalf("failed patch error = %v", bad)
	}
	c.do("POST", "/v1/sessions/p/steps", `{"state":{},"patch":[]}`, 400)
	for _, body := range []string{`{"patch":{"op":"add"}}`, `{"patch":[5]}`, `{"patch":[{"op":7,"path":"/n"}]}`, `{"patch":"x"}`} {
		bad := c.do("POST", "/v1/sessions/p/steps", body, 400)
		if msg, _ := bad["error"].(string); !strings.Contains(msg, "patch") || strings.Contains(msg, "Go ") || strings.Contains(msg, "tree.") {
			t.Errorf("%s: error %q, want one about the patch in the API's words", body, msg)
		}
	}
	if head := c.do("GET", "/v1/sessions/p/head?state=false", "", 200); head["step"].(interface{ String() string }).String() != "2" {
		t.Fatalf("a failed patch committed: head %v", head["step"])
	}
}
