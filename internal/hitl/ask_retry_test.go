package hitl_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/internal/hitl"
	"github.com/cairnlog/cairn/internal/httpapi"
)

// TestAskRetriedAfterReply: a question asked with an idempotency key,
// answered by a human, then asked again with the key (the agent's process
// died before it saw its question land) was asked a second time, above
// the reply. AskWith now answers with the question its first try asked,
// replayed, whose answer Answer reads, and writes nothing, as the HTTP
// API answers the same question committed again with the key and its
// expect; a question asked after the reply with a key of its own is a
// new one.
func TestAskRetriedAfterReply(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	s, _ := ws.Session("s")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":1}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	q, err := hitl.AskWith(ctx, s, "deploy?", nil, hitl.AskOptions{IdempotencyKey: "job-1/ask"})
	if err != nil {
		t.Fatal(err)
	}
	if a, err := hitl.Answer(ctx, s, q); a != nil || err != nil {
		t.Fatalf("Answer of a question pending: %v, %v; want none", a, err)
	}
	human, _ := cairn.OpenStore(store).Session("s")
	reply, err := hitl.Reply(ctx, human, json.RawMessage(`{"approved":true}`))
	if err != nil {
		t.Fatal(err)
	}
	for name, sess := range map[string]*cairn.Session{"the same workspace": s, "a fresh one": mustSession(t, cairn.OpenStore(store))} {
		again, err := hitl.AskWith(ctx, sess, "deploy?", nil, hitl.AskOptions{IdempotencyKey: "job-1/ask"})
		if err != nil {
			t.Fatalf("%s: retry: %v", name, err)
		}
		if !again.Replayed || again.Number != q.Number || again.ID != q.ID {
			t.Fatalf("%s: retry %s (replayed %v); want %s replayed", name, again, again.Replayed, q)
		}
		a, err := hitl.Answer(ctx, sess, again)
		if err != nil || a == nil || a.ID != reply.ID {
			t.Fatalf("%s: Answer: %v, %v; want the reply %s", name, a, err, reply)
		}
	}

	// The HTTP API: the same question, committed again with its key and
	// the head it was asked on, is answered with it.
	ts := httptest.NewServer(httpapi.New(cairn.OpenStore(store), httpapi.Options{}))
	defer ts.Close()
	req, _ := http.NewRequest("POST", ts.URL+"/v1/sessions/s/steps",
		strings.NewReader(`{"state":{"a":1},"record":{"question":"deploy?"},"status":"awaiting_input","expect":1}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "job-1/ask")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || !strings.Contains(string(body), `"step":2`) || !strings.Contains(string(body), `"replayed":true`) {
		t.Fatalf("HTTP retry of the question: %d %s; want 201 with step 2 replayed", resp.StatusCode, body)
	}

	head, err := mustSession(t, cairn.OpenStore(store)).Head(ctx)
	if err != nil || head.ID != reply.ID {
		t.Fatalf("head %v, %v; want the reply %s: a retry wrote a step", head, err, reply)
	}
	next, err := hitl.AskWith(ctx, s, "deploy?", nil, hitl.AskOptions{IdempotencyKey: "job-1/ask-2"})
	if err != nil || next.Replayed || next.Number != reply.Number+1 {
		t.Fatalf("a new question with its own key after the reply: %v (replayed %v), %v; want step %d", next, next != nil && next.Replayed, err, reply.Number+1)
	}
}

func mustSession(t *testing.T, ws *cairn.Workspace) *cairn.Session {
	t.Helper()
	s, err := ws.Session("s")
	if err != nil {
		t.Fatal(err)
	}
	return s
}
