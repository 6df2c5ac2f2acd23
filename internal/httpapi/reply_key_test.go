package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestIdempotencyKeyRepliesOnce: a client that sends a reply twice with
// one Idempotency-Key (a retry after a reset connection or a timeout)
// gets 201 both times, with the same step, the second marked replayed
// (field and header), also once the agent has gone on and the reply
// names its question; before, the retry was a 409, "does not await
// input". The key with another answer is a 409 in words, a bad key a
// 400, and a retry without a key the 409 it always was.
func TestIdempotencyKeyRepliesOnce(t *testing.T) {
	c, _ := newChecker(t, Options{MaxBody: 1 << 20})
	c.do("POST", "/v1/sessions/s/steps", `{"state":{"plan":"deploy"}}`, 201)
	c.do("POST", "/v1/sessions/s/steps", `{"state":{"plan":"deploy"},"record":{"question":"Deploy?"},"status":"awaiting_input","expect":1}`, 201)
	body := `{"input":{"approved":true},"expect":2}`
	key := map[string][]string{"Idempotency-Key": {"6a1f0c2e-reply"}}
	first := c.doWith("POST", "/v1/sessions/s/reply", body, key, 201)
	if first["replayed"] != nil || first["idempotency_key"] != key["Idempotency-Key"][0] || first["step"] != json.Number("3") {
		t.Fatalf("first answer %v", first)
	}
	h := http.Header{"Content-Type": {"application/json"}, "Idempotency-Key": key["Idempotency-Key"]}
	for _, agentWentOn := range []bool{false, true} {
		if agentWentOn {
			c.do("POST", "/v1/sessions/s/steps", `{"state":{"plan":"deployed"}}`, 201)
		}
		status, b, hdr := c.send("POST", "/v1/sessions/s/reply", body, h, "")
		again := c.check("POST", "/v1/sessions/s/reply", status, b)
		if status != 201 || again["replayed"] != true || hdr.Get("Idempotent-Replayed") != "true" || again["id"] != first["id"] {
			t.Fatalf("retry (agent went on: %v): %d %s (Idempotent-Replayed %q); want 201, the first's step, replayed", agentWentOn, status, b, hdr.Get("Idempotent-Replayed"))
		}
	}
	if head := c.do("GET", "/v1/sessions/s/head", "", 200); head["step"] != json.Number("4") {
		t.Errorf("head is step %v after the retries, want 4", head["step"])
	}
	e := c.doWith("POST", "/v1/sessions/s/reply", `{"input":{"approved":false},"expect":2}`, key, 409)
	if msg, _ := e["error"].(string); e["code"] != "conflict" || !strings.Contains(msg, `idempotency key "6a1f0c2e-reply" was already used for step 3`) {
		t.Errorf("key used for another answer: %v", e)
	}
	c.do("POST", "/v1/sessions/s/reply", body, 409)
	e = c.doWith("POST", "/v1/sessions/s/reply", body, map[string][]string{"Idempotency-Key": {"two words"}}, 400)
	if msg, _ := e["error"].(string); !strings.HasPrefix(msg, "Idempotency-Key") {
		t.Errorf("a bad key: %v", e)
	}
}
