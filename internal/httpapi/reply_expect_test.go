package httpapi

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestReplyExpectQuestionMoved: a reply that names the question it
// answers ("expect": the step the inbox showed) is a 409 once another
// worker withdrew that question and asked another, which stays in the
// inbox; naming the new one answers it. Before, the reply had no such
// member (400) and a plain reply answered whatever the head asked.
func TestReplyExpectQuestionMoved(t *testing.T) {
	ws := cairn.OpenStore(memStore())
	ts := httptest.NewServer(New(ws, Options{}))
	t.Cleanup(ts.Close)
	c := &checker{t: t, spec: loadSpec(t), base: ts.URL, covered: map[string]bool{}}

	c.do("POST", "/v1/sessions/s/steps", `{"state":{"plan":"deploy"}}`, 201)
	c.do("POST", "/v1/sessions/s/steps", `{"state":{"plan":"deploy"},"record":{"question":"Deploy to staging?"},"status":"awaiting_input","expect":1}`, 201)
	// Another worker, through its own server or the Go API, withdraws the
	// question and asks another.
	other, err := ws.Session("s")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := other.Commit(ctx, cairn.JSON([]byte(`{"plan":"drop"}`)), cairn.CommitOptions{Withdraw: true, Expect: cairn.ExpectHead(2)}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Commit(ctx, cairn.JSON([]byte(`{"plan":"drop"}`)), cairn.CommitOptions{
		Status: cairn.AwaitingInput, Record: json.RawMessage(`{"question":"Drop the database?"}`), Expect: cairn.ExpectHead(3)}); err != nil {
		t.Fatal(err)
	}

	got := c.do("POST", "/v1/sessions/s/reply", `{"input":{"approved":true},"expect":2}`, 409)
	if msg, _ := got["error"].(string); !strings.Contains(msg, "expected the question at s@2, but the head is s@4") {
		t.Fatalf("409 = %v", got)
	}
	in := c.do("GET", "/v1/inbox", "", 200)
	if p := in["pending"].([]any); len(p) != 1 || p[0].(map[string]any)["step"] != json.Number("4") {
		t.Fatalf("inbox after the refused reply = %v", in)
	}
	c.do("POST", "/v1/sessions/s/reply", `{"input":true,"expect":0}`, 400)
	r := c.do("POST", "/v1/sessions/s/reply", `{"input":{"approved":false},"expect":4}`, 201)
	if rec := r["record"].(map[string]any); rec["in_reply_to"] != json.Number("4") {
		t.Fatalf("reply step = %v", r)
	}
}
