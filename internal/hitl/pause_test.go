package hitl_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/internal/hitl"
	"github.com/cairnlog/cairn/internal/httpapi"
	"github.com/cairnlog/cairn/internal/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// paused returns a workspace whose session s has a question pending at
// step 2.
func paused(t *testing.T) (*cairn.Workspace, *cairn.Session) {
	t.Helper()
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	s, _ := ws.Session("s")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":1}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := hitl.Ask(ctx, s, "deploy?", nil); err != nil {
		t.Fatal(err)
	}
	return ws, s
}

// pending returns the steps the inbox lists.
func pending(t *testing.T, ws *cairn.Workspace) []uint64 {
	t.Helper()
	p, err := hitl.Inbox(context.Background(), ws)
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	for _, q := range p {
		out = append(out, q.Step)
	}
	return out
}

// TestCommitOnPausedHeadRefused is issue 13 item 13: a plain commit on a
// head that awaits input, or a second question, is refused with a
// conflict and the question stays in the inbox; the reply answers it; a
// commit that says it withdraws the question goes through.
func TestCommitOnPausedHeadRefused(t *testing.T) {
	ctx := context.Background()
	ws, s := paused(t)
	_, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":2}`)), cairn.CommitOptions{})
	if !errors.Is(err, cairn.ErrConflict) || !errors.Is(err, cairn.ErrAwaitingInput) || !strings.Contains(err.Error(), "awaits input") {
		t.Fatalf("commit on a paused head: %v, want a conflict saying it awaits input", err)
	}
	if _, err := hitl.Ask(ctx, s, "really?", nil); !errors.Is(err, cairn.ErrConflict) {
		t.Fatalf("asking twice: %v, want a conflict", err)
	}
	if got := pending(t, ws); len(got) != 1 || got[0] != 2 {
		t.Fatalf("inbox after refused commits = %v, want the question at step 2", got)
	}
	r, err := hitl.Reply(ctx, s, json.RawMessage(`"yes"`))
	if err != nil || r.Number != 3 {
		t.Fatalf("reply = %v, %v", r, err)
	}
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":2}`)), cairn.CommitOptions{}); err != nil {
		t.Fatalf("commit after the reply: %v", err)
	}
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":3}`)), cairn.CommitOptions{Reply: true}); !errors.Is(err, cairn.ErrConflict) {
		t.Fatalf("a reply with nothing asked: %v, want a conflict", err)
	}
	if _, err := hitl.Ask(ctx, s, "again?", nil); err != nil {
		t.Fatal(err)
	}
	w, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":3}`)), cairn.CommitOptions{Withdraw: true})
	if err != nil || w.Number != 6 {
		t.Fatalf("withdrawing commit = %v, %v", w, err)
	}
	if got := pending(t, ws); len(got) != 0 {
		t.Fatalf("inbox after the withdrawal = %v", got)
	}
}

// TestPausedHeadRefusedOverHTTPAndMCP: the HTTP API answers 409 and the
// MCP checkpoint tool an error for a commit on a paused head, through
// the root API's refusal; the question stays pending.
func TestPausedHeadRefusedOverHTTPAndMCP(t *testing.T) {
	ws, _ := paused(t)
	ts := httptest.NewServer(httpapi.New(ws, httpapi.Options{}))
	defer ts.Close()
	req, _ := http.NewRequest("POST", ts.URL+"/v1/sessions/s/steps", strings.NewReader(`{"state":{"a":2}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("HTTP commit on a paused head: %d, want 409", resp.StatusCode)
	}

	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(ws, "test").Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolCheckpoint,
		Arguments: map[string]any{"session": "s", "state_json": `{"a":2}`}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError {
		t.Fatalf("MCP checkpoint on a paused head succeeded")
	}
	if got := pending(t, ws); len(got) != 1 || got[0] != 2 {
		t.Fatalf("inbox = %v, want the question at step 2", got)
	}
}
