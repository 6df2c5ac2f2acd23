package adk

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/adk/session"
)

// TestStaleSessionIsRefused: two workers resume one session; the first
// appends an event that changes its state; the second, whose copy has not
// seen that event, cannot append on top of it (its state change was made
// on state it never saw): it is told the session is stale, nothing it sent
// is stored, and once it gets the session again it can append.
func TestStaleSessionIsRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, b := openDir(t, dir), openDir(t, dir)
	if _, err := a.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "chat", State: map[string]any{"cart": "empty"}}); err != nil {
		t.Fatal(err)
	}
	get := &session.GetRequest{AppName: "app", UserID: "u", SessionID: "chat"}
	first, err := a.Get(ctx, get)
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.Get(ctx, get)
	if err != nil {
		t.Fatal(err)
	}
	add := func(id, cart string) *session.Event {
		return &session.Event{ID: id, Author: "model", Timestamp: time.Unix(1, 0),
			Actions: session.EventActions{StateDelta: map[string]any{"cart": cart}}}
	}
	if err := a.AppendEvent(ctx, first.Session, add("e1", "apples")); err != nil {
		t.Fatal(err)
	}
	err = b.AppendEvent(ctx, second.Session, add("e2", "pears"))
	if !errors.Is(err, ErrStaleSession) {
		t.Fatalf("append on a stale session = %v, want ErrStaleSession", err)
	}
	if want := `adk session service: append event "e2": stale session: session "chat" of app "app" user "u" has 1 event(s) another writer appended since it was read; get it again`; err.Error() != want {
		t.Fatalf("error = %q\nwant    %q", err, want)
	}
	got, err := b.Get(ctx, get)
	if err != nil {
		t.Fatal(err)
	}
	if n := got.Session.Events().Len(); n != 1 {
		t.Fatalf("stored %d events, want 1", n)
	}
	if v, _ := got.Session.State().Get("cart"); v != "apples" {
		t.Fatalf("cart = %v, want apples", v)
	}
	if err := b.AppendEvent(ctx, got.Session, add("e2", "apples and pears")); err != nil {
		t.Fatal(err)
	}
	// The first worker's copy has not seen e2 now.
	if err := a.AppendEvent(ctx, first.Session, add("e3", "none")); !errors.Is(err, ErrStaleSession) || !strings.Contains(err.Error(), "1 event(s)") {
		t.Fatalf("append on the first worker's stale copy = %v", err)
	}
}
