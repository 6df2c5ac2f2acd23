package cairn_test

import (
	"context"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestVerifySameNameTwice: Verify(ctx, "s", "s") (a program passing a
// list with a name twice, or cairn verify s s) checked s twice and
// reported two sessions verified where there is one. A name is now
// verified once, as Usage measures it once.
func TestVerifySameNameTwice(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	commitSmall(t, ws, "s", 3)
	r, err := ws.Verify(ctx, "s", "s")
	if err != nil {
		t.Fatal(err)
	}
	if r.Sessions != 1 || r.Steps != 3 || len(r.Problems) != 0 {
		t.Errorf("verify s s: %d sessions, %d steps, problems %v; want 1 session, 3 steps, none", r.Sessions, r.Steps, r.Problems)
	}
}
