package adk

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"google.golang.org/adk/session"
)

// TestCreateInvalidScopedState: an app: or user: value that cannot be
// stored (NaN, which JSON cannot encode; nesting deeper than cairn stores)
// fails Create without creating the session, so the caller can retry with
// a good value instead of hitting "already exists".
func TestCreateInvalidScopedState(t *testing.T) {
	ctx := context.Background()
	svc := openDir(t, t.TempDir())
	var deep any
	if err := json.Unmarshal([]byte(strings.Repeat("[", 600)+strings.Repeat("]", 600)), &deep); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key string
		bad any
	}{{"app:x", math.NaN()}, {"user:x", math.NaN()}, {"app:y", deep}, {"user:y", deep}} {
		key := c.key
		id := "s-" + key
		if _, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: id,
			State: map[string]any{key: c.bad}}); err == nil {
			t.Fatalf("Create with a bad %s succeeded", key)
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
