package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestUsageOfARemovedSession: du of a removed session said only "session
// has no steps", where every other command says it was removed; one that
// never existed is not found either way.
func TestUsageOfARemovedSession(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	commitN(t, ws, "s", "x", 1, 2)
	if _, err := ws.Remove(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	_, err := ws.Usage(ctx, "s")
	if !errors.Is(err, cairn.ErrRemoved) || !strings.Contains(err.Error(), "session s not found: it was removed") {
		t.Fatalf("usage of removed s: %v; want it said removed", err)
	}
	_, err = ws.Usage(ctx, "nope")
	if !errors.Is(err, cairn.ErrNotFound) || errors.Is(err, cairn.ErrRemoved) || !strings.Contains(err.Error(), "session nope not found: it has no steps") {
		t.Fatalf("usage of nope: %v; want not found", err)
	}
}
