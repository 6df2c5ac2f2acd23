package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestIdempotencyKeyCommitsOnce: a client that sends the same commit
// twice with one Idempotency-Key (a retry after a reset connection or a
// timeout) gets 201 both times, with the same step; the second answer
// says it was replayed (field and header) and no second step is
// written. The key on another commit is a 409 in words; a bad key a 400.
func TestIdempotencyKeyCommitsOnce(t *testing.T) {
	c, _ := newChecker(t, Options{MaxBody: 1 << 20})
	c.do("POST", "/v1/sessions/s/steps", `{"state":{"n":1}}`, 201)
	body := `{"patch":[{"op":"add","path":"/m","value":2}],"record":{"role":"tool"},"expect":1}`
	key := map[string][]string{"Idempotency-Key": {"0b6e2c1a-5f1d-4c3e-9a7b-2d8f00c0ffee"}}
	first := c.doWith("POST", "/v1/sessions/s/steps", body, key, 201)
	if first["replayed"] != nil || first["idempotency_key"] != key["Idempotency-Key"][0] {
		t.Fatalf("first answer %v", first)
	}
	h := http.Header{"Content-Type": {"application/json"}, "Idempotency-Key": key["Idempotency-Key"]}
	status, b, hdr := c.send("POST", "/v1/sessions/s/steps", body, h, "")
	second := c.check("POST", "/v1/sessions/s/steps", status, b)
	if status != 201 || second["replayed"] != true || hdr.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("second answer %d %s (Idempotent-Replayed %q); want 201, replayed", status, b, hdr.Get("Idempotent-Replayed"))
	}
	if second["id"] != first["id"] || second["step"] != json.Number("2") {
		t.Errorf("second answer names step %v %v, want the first's, %v", second["step"], second["id"], first["id"])
	}
	if head := c.do("GET", "/v1/sessions/s/head", "", 200); head["step"] != json.Number("2") {
		t.Errorf("head is step %v after the retry, want 2", head["step"])
	}
	if _, _, hdr := c.send("POST", "/v1/sessions/s/steps", `{"state":{"n":3}}`, http.Header{"Content-Type": {"application/json"}}, ""); hdr.Get("Idempotent-Replayed") != "" {
		t.Errorf("a commit without a key is marked replayed")
	}
	used := c.doWith("POST", "/v1/sessions/s/steps", `{"state":{"n":3},"expect":3}`, map[string][]string{"Idempotency-Key": {"k3"}}, 201)
	if used["step"] != json.Number("4") {
		t.Fatalf("commit with k3: %v", used)
	}
	e := c.doWith("POST", "/v1/sessions/s/steps", `{"state":{"n":4}}`, map[string][]string{"Idempotency-Key": {"k3"}}, 409)
	if msg, _ := e["error"].(string); e["code"] != "conflict" || !strings.Contains(msg, `idempotency key "k3" was already used for step 4`) {
		t.Errorf("key used for another step: %v", e)
	}
	for _, bad := range [][]string{{"two words"}, {strings.Repeat("k", 129)}, {"a", "b"}} {
		e := c.doWith("POST", "/v1/sessions/s/steps", `{"state":{}}`, map[string][]string{"Idempotency-Key": bad}, 400)
		if msg, _ := e["error"].(string); !strings.HasPrefix(msg, "Idempotency-Key") {
			t.Errorf("Idempotency-Key %q: %v", bad, e)
		}
	}
}

// TestLongIdempotencyKeyClipped: a key far past 128 characters was
// echoed whole in its 400 (a header of 60 KB, a 60 KB message). It is
// shown by its first 32 characters and its length, as a long session
// name is.
func TestLongIdempotencyKeyClipped(t *testing.T) {
	c, _ := newChecker(t, Options{})
	key := map[string][]string{"Idempotency-Key": {strings.Repeat("k", 60_000)}}
	msg, _ := c.doWith("POST", "/v1/sessions/s/steps", `{"state":1}`, key, 400)["error"].(string)
	if want := `Idempotency-Key "` + strings.Repeat("k", 32) + `…" (60000 characters): want`; !strings.Contains(msg, want) || len(msg) > 300 {
		t.Errorf("a 60,000-character key: error %.400q, want %q", msg, want)
	}
	c.do("GET", "/v1/sessions/s/head", "", 404)
}
