package export_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/export"
)

// TestPreferenceLongForkChain: f1 forked at f0@1, f2 at f1@1, … f70 at
// f69@1 is a legitimate store (each fork's first step a copy of the
// last), but preference export failed whole, exit 1, with "fork origin
// f0@1: more than 64 forks of forks at one step", exporting nothing.
// Every fork of the chain resolves to f0@1, and the pair is written.
func TestPreferenceLongForkChain(t *testing.T) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	commit := func(name, rec string) {
		s, _ := ws.Session(name)
		if _, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{Record: []byte(rec)}); err != nil {
			t.Fatal(err)
		}
	}
	commit("f0", `{"messages":[{"role":"user","content":"q"}]}`)
	const n = 70
	for i := 1; i <= n; i++ {
		fork(ctx, t, ws, fmt.Sprintf("f%d@1", i-1), fmt.Sprintf("f%d", i))
	}
	commit(fmt.Sprintf("f%d", n), `{"messages":[{"role":"assistant","content":"good"}],"outcome":"success"}`)
	commit("f0", `{"messages":[{"role":"assistant","content":"bad"}],"outcome":"failure"}`)
	out, sum, _ := runLong(t, ws, export.Options{Format: export.Preference})
	if sum.Pairs != 1 {
		t.Fatalf("%d pairs, want 1: %s", sum.Pairs, out)
	}
}
