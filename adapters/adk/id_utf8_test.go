package adk

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/adk/session"
)

// TestIDsMustBeUTF8: the stored document records the app, user and
// session ids as JSON, which cannot hold bytes that are not UTF-8; a session
// created under such an id could never be read back (Get would find
// another id recorded) nor listed. Create refuses it in words.
func TestIDsMustBeUTF8(t *testing.T) {
	ctx := context.Background()
	_, s := memService(t)
	for _, req := range []*session.CreateRequest{
		{AppName: "app\xff", UserID: "u", SessionID: "s"},
		{AppName: "app", UserID: "u\xff", SessionID: "s"},
		{AppName: "app", UserID: "u", SessionID: "s\xff"},
	} {
		_, err := s.Create(ctx, req)
		if err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
			t.Fatalf("Create(%q, %q, %q): %v, want a refusal", req.AppName, req.UserID, req.SessionID, err)
		}
	}
	l, err := s.List(ctx, &session.ListRequest{AppName: "app"})
	if err != nil || len(l.Sessions) != 0 {
		t.Fatalf("List = %d sessions, %v; want none", len(l.Sessions), err)
	}
}
