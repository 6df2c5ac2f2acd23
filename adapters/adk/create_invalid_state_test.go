package adk

import (
	"context"
	"math"
	"testing"

	"google.golang.org/adk/session"
)

// TestCreateInvalidScopedState: an app: or user: value that cannot be
// stored (NaN, +Inf) fails Create without creating the session, so the
// caller can retry with a good value instead of hitting "already exists".
func TestCreateInvalidScopedState(t *testing.T) {
	ctx := context.Background()
	svc := openDir(t, t.TempDir())
	for _, key := range []string{"app:x", "user:x"} {
		id := "s-" + key
		if _, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: id,
			State: map[string]any{key: math.NaN()}}); err == nil {
			t.Fatalf("Create with %s NaN succeeded", key)
		}
		if _, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: id}); err == nil {
			t.Fatalf("%s: the failed Create left a session behind", key)
		}
		if _, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: id,
			State: map[string]any{key: 1.0}}); err != nil {
			t.Fatalf("%s: retried Create: %v", key, err)
		}
	}
}
