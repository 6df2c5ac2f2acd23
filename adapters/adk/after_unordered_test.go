package adk

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/adk/session"
)

// TestGetAfterFiltersEveryEvent: Get's After returns every event whose
// timestamp is at or after it, as ADK's GetRequest says, even when the
// events' timestamps are not in append order: two processes appending to
// one session (each re-applying its event on top of the other's) with
// clocks a few seconds apart store them so.
func TestGetAfterFiltersEveryEvent(t *testing.T) {
	ctx := context.Background()
	_, s := memService(t)
	c, err := s.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "chat"})
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range []int64{1, 5, 3, 7} {
		ev := &session.Event{ID: fmt.Sprint("e", sec), Author: "user", Timestamp: time.Unix(sec, 0)}
		if err := s.AppendEvent(ctx, c.Session, ev); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "chat", After: time.Unix(4, 0)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for ev := range got.Session.Events().All() {
		ids = append(ids, ev.ID)
	}
	if got, want := fmt.Sprint(ids), "[e5 e7]"; got != want {
		t.Fatalf("events after 4s = %s, want %s", got, want)
	}
}
