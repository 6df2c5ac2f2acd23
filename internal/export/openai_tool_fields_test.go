package export_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/export"
)

// tool_call_id and name belong to tool results (docs/records.md: "tool
// only"); a record that sets them on another role still exports to
// OpenAI's chat shape without them there, as name already was.
func TestOpenAIToolFieldsOnlyOnToolMessages(t *testing.T) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	s, _ := ws.Session("s")
	r := cairn.Record{Messages: []cairn.Message{{Role: "user", Content: "go", ToolCallID: "u1"},
		{Role: "assistant", Content: "ok", ToolCallID: "x", Name: "nm"},
	}}
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), rec(t, r)); err != nil {
		t.Fatal(err)
	}
	out, _, _ := run(t, ws, export.Options{Format: export.OpenAIJSONL})
	if strings.Contains(out, "tool_call_id") || strings.Contains(out, `"name"`) {
		t.Errorf("tool-result fields on a user or assistant message: %s", out)
	}
}
