package adk

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"google.golang.org/adk/session"
)

// TestLimitErrorSaysHowToRaise: a session larger than the workspace's read
// limits fails Get and List with cairn.ErrLimit and an error that names the
// session (Get: its ADK ids; List: its cairn name), the limit and the
// environment variable that raises it.
func TestLimitErrorSaysHowToRaise(t *testing.T) {
	ctx := context.Background()
	ws, s := memService(t)
	c, err := s.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "chat-1"})
	if err != nil {
		t.Fatal(err)
	}
	ev := &session.Event{ID: "e1", Author: "user", Timestamp: time.Unix(1, 0),
		Actions: session.EventActions{StateDelta: map[string]any{"notes": strings.Repeat("x", 4096)}}}
	if err := s.AppendEvent(ctx, c.Session, ev); err != nil {
		t.Fatal(err)
	}
	if err := ws.SetLimits(cairn.Limits{MaxValueBytes: 1000, MaxTotalBytes: 1000}); err != nil {
		t.Fatal(err)
	}
	_, getErr := New(ws).Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "chat-1"})
	_, listErr := New(ws).List(ctx, &session.ListRequest{AppName: "app"})
	// List reads a session before it knows its ids: it names the cairn
	// session, which `cairn log` takes.
	want := map[string]string{"Get": `session "chat-1" of app "app" user "u"`, "List": s.SessionName("app", "u", "chat-1")}
	for name, err := range map[string]error{"Get": getErr, "List": listErr} {
		if !errors.Is(err, cairn.ErrLimit) {
			t.Fatalf("%s: %v, want a limit error", name, err)
		}
		if msg := err.Error(); !strings.Contains(msg, "$CAIRN_MAX_") || !strings.Contains(msg, "the limit is 1000 bytes") || !strings.Contains(msg, want[name]) {
			t.Fatalf("%s: %q does not name the session, the limit and its environment variable", name, msg)
		}
	}
}
