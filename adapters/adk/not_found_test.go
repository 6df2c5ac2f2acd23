package adk

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/adk/session"
)

// TestNotFoundSaysItOnce: appending to a deleted session fails with one
// "session not found" sentence, not the service's name twice.
func TestNotFoundSaysItOnce(t *testing.T) {
	ctx := context.Background()
	_, s := memService(t)
	c, err := s.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "chat-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, &session.DeleteRequest{AppName: "app", UserID: "u", SessionID: "chat-1"}); err != nil {
		t.Fatal(err)
	}
	err = s.AppendEvent(ctx, c.Session, &session.Event{ID: "e1", Author: "user", Timestamp: time.Unix(1, 0)})
	if err == nil {
		t.Fatal("append to a deleted session succeeded")
	}
	if n := strings.Count(err.Error(), "adk session service"); n != 1 {
		t.Fatalf("%q names the service %d times, want once", err, n)
	}
}
