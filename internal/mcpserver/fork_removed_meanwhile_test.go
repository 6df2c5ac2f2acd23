package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/internal/fixture"
)

// TestForkRemovedMeanwhileTool: a fork whose base session is removed
// after the tool read its step and before it wrote its own (a cairn rm
// between the two) is a tool error saying the session was removed, as
// show says of that step then, with or without gc since; never
// "pruned", which nothing was, nor the store's keys or Go's types. The
// CLI's test of it is TestForkOfRemovedSessionSaysRemoved.
func TestForkRemovedMeanwhileTool(t *testing.T) {
	ctx := context.Background()
	store := &fixture.RemovingStore{Store: mem.New()}
	ws := cairn.OpenStore(store)
	cs := connect(t, ws)
	for _, tc := range []struct {
		from, ref string
		gc        bool
	}{
		{"a@1", "a@1", false},
		{"b@3", "b@3", false},
		{"c", "c@5", true}, // its head
	} {
		session, _, _ := strings.Cut(tc.ref, "@")
		s, err := ws.Session(session)
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":1}`)), cairn.CommitOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		store.Arm(session, tc.gc)
		got := call(t, cs, ToolFork, map[string]any{"from": tc.from, "to": "fork-of-" + session}, nil, true)
		if err := store.Err(); err != nil {
			t.Fatalf("rm %s beside the fork: %v", session, err)
		}
		shown := call(t, cs, ToolShow, map[string]any{"ref": tc.ref}, nil, true)
		if !strings.Contains(got, "step "+tc.ref+" not found: the session was removed") ||
			strings.Contains(got, "pruned") || strings.Contains(got, "/") || strings.Contains(got, "cairn.") {
			t.Errorf("fork %s as %s is removed: %q; want a tool error saying the session was removed, as show does (%q)", tc.from, session, got, shown)
		}
	}
}
