package cairn_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestForkOriginOfNoSession: ForkOrigin of a name that has no steps (a
// typo, a session never committed to) answered nil, nil: "not forked",
// as for a real session that was not, so a caller could not tell a
// mistyped name from a session started afresh. Like Verify of such a
// name, it is now ErrNotFound; a session that exists and was not forked
// still answers nil, nil.
func TestForkOriginOfNoSession(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	commitSmall(t, ws, "p", 2)
	if o, err := ws.ForkOrigin(ctx, "p"); err != nil || o != nil {
		t.Errorf("fork origin of p, not forked: %v, %v; want nil, nil", o, err)
	}
	if _, err := ws.Session("marked"); err != nil { // named, never committed
		t.Fatal(err)
	}
	for _, name := range []string{"nope", "marked"} {
		o, err := ws.ForkOrigin(ctx, name)
		if !errors.Is(err, cairn.ErrNotFound) || o != nil {
			t.Errorf("fork origin of %s, which has no steps: %v, %v; want ErrNotFound", name, o, err)
		}
	}
}
