package httpapi

import (
	"fmt"
	"strings"
	"testing"
)

// TestCommitEmptyStatusRefused: "status": "" was taken for running, so
// a caller whose status came from an unset variable committed a step
// that asked no question, and nobody was told. It is refused as any
// other unknown status is, and nothing is written; a status left out or
// null is still running, as the OpenAPI document says.
func TestCommitEmptyStatusRefused(t *testing.T) {
	c, _ := newChecker(t, Options{})
	c.do("POST", "/v1/sessions/s/steps", `{"state":{"n":1}}`, 201)
	got := c.do("POST", "/v1/sessions/s/steps", `{"state":{"n":2},"status":""}`, 400)
	if msg, _ := got["error"].(string); !strings.Contains(msg, `status "": want running, awaiting_input or done`) {
		t.Errorf(`status "": %v; want it to say what a status is`, got)
	}
	// Nothing was written: the head is still step 1.
	if head := c.do("GET", "/v1/sessions/s/head", "", 200); fmt.Sprint(head["step"]) != "1" {
		t.Fatalf("head after the refused commit: %v; want step 1", head)
	}
	for _, b := range []string{`{"state":{"n":2},"status":null}`, `{"state":{"n":3}}`} {
		if st := c.do("POST", "/v1/sessions/s/steps", b, 201); st["status"] != "running" {
			t.Errorf("%s: status %v; want running", b, st["status"])
		}
	}
}
