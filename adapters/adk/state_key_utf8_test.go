package adk

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/adk/session"
)

// TestStateKeysMustBeUTF8: JSON cannot hold a key that is not UTF-8
// (encoding/json turns each bad byte into U+FFFD), so two such keys would
// be stored as one and read back as neither. Create and AppendEvent refuse
// them in words, before anything is stored; temp: keys, never stored, may
// be anything.
func TestStateKeysMustBeUTF8(t *testing.T) {
	ctx := context.Background()
	ws, s := memService(t)
	for _, state := range []map[string]any{{"a\xff": 1}, {"user:\xfe": 1}, {"app:\xff": 1}} {
		_, err := s.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "c", State: state})
		if err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
			t.Fatalf("Create with state %q: %v, want a refusal", state, err)
		}
	}
	c, err := s.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "chat-1"})
	if err != nil {
		t.Fatal(err)
	}
	for i, delta := range []map[string]any{{"k\xff": 1, "k\xfe": 2}, {"app:\xff": 1}, {"user:\xff": 1}} {
		ev := &session.Event{ID: "bad", Author: "user", Timestamp: time.Unix(int64(i), 0), Actions: session.EventActions{StateDelta: delta}}
		if err := s.AppendEvent(ctx, c.Session, ev); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
			t.Fatalf("AppendEvent with delta %q: %v, want a refusal", delta, err)
		}
	}
	ok := &session.Event{ID: "ok", Author: "user", Timestamp: time.Unix(9, 0), Actions: session.EventActions{StateDelta: map[string]any{"temp:\xff": 1}}}
	if err := s.AppendEvent(ctx, c.Session, ok); err != nil {
		t.Fatalf("AppendEvent with a temp: key: %v", err)
	}
	got, err := New(ws).Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "chat-1"})
	if err != nil {
		t.Fatal(err)
	}
	if n := got.Session.Events().Len(); n != 1 {
		t.Fatalf("%d events stored, want 1 (refused events store nothing)", n)
	}
	for k := range got.Session.State().All() {
		t.Fatalf("state key %q stored, want none", k)
	}
}
