package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestKeyRetryWrongExpectNamesHead: a commit sent again with its
// Idempotency-Key but another expect than its first try's, when that
// try's step is the head, is a 409. It said the head was the step's
// parent: "the session has no steps" and "head":0 on a session whose
// head is step 1 (a client going by it would commit with expect 0 and
// be refused again), or "the head is 2" beside "head":1. Both name the
// session's real head.
func TestKeyRetryWrongExpectNamesHead(t *testing.T) {
	c, _ := newChecker(t, Options{MaxBody: 1 << 20})
	key := map[string][]string{"Idempotency-Key": {"k1"}}
	c.doWith("POST", "/v1/sessions/s/steps", `{"state":{"n":1}}`, key, 201)
	for _, tc := range []struct{ body, head string }{
		{`{"state":{"n":1},"expect":5}`, "1"},
		{`{"state":{"n":2},"expect":1}`, "2"}, // k2: step 2, then retried with expect 5
	} {
		if tc.head == "2" {
			k2 := map[string][]string{"Idempotency-Key": {"k2"}}
			c.doWith("POST", "/v1/sessions/s/steps", tc.body, k2, 201)
			key, tc.body = k2, `{"state":{"n":2},"expect":5}`
		}
		e := c.doWith("POST", "/v1/sessions/s/steps", tc.body, key, 409)
		msg, _ := e["error"].(string)
		if e["head"] != json.Number(tc.head) || !strings.Contains(msg, "expected head 5, but the head is "+tc.head) {
			t.Errorf("retry of the key's step %s with expect 5: %v; want head %s, named in the message", tc.head, e, tc.head)
		}
	}
	if head := c.do("GET", "/v1/sessions/s/head", "", 200); head["step"] != json.Number("2") {
		t.Errorf("head is step %v, want 2: a refused retry wrote a step", head["step"])
	}
	// The head the 409 named is the one to expect.
	c.do("POST", "/v1/sessions/s/steps", `{"state":{"n":3},"expect":2}`, 201)
}
