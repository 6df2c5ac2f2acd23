package adk

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/adk/session"
)

// TestCreateAndDeleteSeeOtherProcesses: Create and Delete decide from the
// store's head, not from what this process last wrote. A session another
// process deleted can be created again here, and one it created again after
// this process deleted it is deleted here, not silently kept.
func TestCreateAndDeleteSeeOtherProcesses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, b := openDir(t, dir), openDir(t, dir)
	create := &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "chat"}
	del := &session.DeleteRequest{AppName: "app", UserID: "u", SessionID: "chat"}
	get := &session.GetRequest{AppName: "app", UserID: "u", SessionID: "chat"}

	// a creates; b deletes; a creates again.
	if _, err := a.Create(ctx, create); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, del); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Create(ctx, create); err != nil {
		t.Fatalf("create again after another process deleted it: %v", err)
	}

	// a deletes; b creates again; a deletes again: the session is gone.
	if err := a.Delete(ctx, del); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Create(ctx, create); err != nil {
		t.Fatal(err)
	}
	if err := a.Delete(ctx, del); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, get); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("get after delete = %v, want not found", err)
	}
}
