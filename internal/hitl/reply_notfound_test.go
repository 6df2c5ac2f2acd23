package hitl

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestReplyToNoSessionSaidOnce: a reply to a session with no steps, or
// a removed one, says the session once, in the words every other
// command uses ("session x not found: it has no steps"). It said "reply
// to x: session x not found: …", through the CLI and MCP.
func TestReplyToNoSessionSaidOnce(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	r, _ := ws.Session("r")
	if _, err := r.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{Status: cairn.AwaitingInput}); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Remove(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"x": "session x not found: it has no steps",
		"r": "session r not found: it was removed",
	} {
		s, _ := ws.Session(name)
		_, err := ReplyWith(ctx, s, json.RawMessage(`true`), ReplyOptions{})
		if err == nil || err.Error() != want || !errors.Is(err, cairn.ErrNotFound) {
			t.Errorf("reply to %s: %v; want %q, matching ErrNotFound", name, err, want)
		}
	}
}
