package export_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/export"
)

// A framework adapter's session whose state holds no conversation yet
// (an ADK session just created, a LangGraph graph without a messages
// channel) was skipped as having "no chat messages in its steps'
// records (export reads each step's record, not its state)", and by
// atif as having "no records": both wrong of a session read from its
// state, whose records are there. The reason now says what it is.
func TestAdapterSessionWithoutConversationSaysSo(t *testing.T) {
	ws := emptyStore(t)
	ctx := context.Background()
	for _, c := range []struct{ name, state, record string }{
		{"adk-created", `{"adk_session":1,"events":[]}`, `{"adk":"create"}`},
		{"graph-without-messages", `{"channels":{"count":{"value":{"json":3}}}}`, `{"langgraph":"checkpoint","checkpoint_id":"k1"}`},
	} {
		s, _ := ws.Session(c.name)
		if _, err := s.Commit(ctx, cairn.JSON([]byte(c.state)), cairn.CommitOptions{Record: json.RawMessage(c.record)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{export.OpenAIJSONL, export.ShareGPT, export.ATIF} {
		out, sum, _ := run(t, ws, export.Options{Format: f})
		for _, name := range []string{"adk-created", "graph-without-messages"} {
			reason := skippedNames(sum)[name]
			if out != "" || !strings.Contains(reason, "framework adapter") || strings.Contains(reason, "not its state") || strings.Contains(reason, "no records") {
				t.Errorf("%s: %s skipped for %q (wrote %q)", f, name, reason, out)
			}
		}
	}
}
