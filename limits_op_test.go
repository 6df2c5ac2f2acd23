package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestGCAndDuBoundObjectReads is issue 13 item 6: gc (and its dry run)
// and du read every object through the MaxObjectBytes bound: an object
// over the limit is refused, naming the limit, after reading at most
// limit+1 bytes of it, instead of being read whole.
func TestGCAndDuBoundObjectReads(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	rng := rand.New(rand.NewPCG(1, 2))
	noise := make([]byte, 3<<20)
	for i := range noise {
		noise[i] = "0123456789abcdef"[rng.IntN(16)]
	}
	w := cairn.OpenStore(store)
	s, _ := w.Session("big")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":"`+string(noise)+`"}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	const limit = 256 << 10
	for name, op := range map[string]func(*cairn.Workspace) error{
		"gc --dry-run": func(ws *cairn.Workspace) error {
			_, err := ws.GC(ctx, cairn.GCOptions{Grace: 0, DryRun: true})
			return err
		},
		"gc": func(ws *cairn.Workspace) error {
			_, err := ws.GC(ctx, cairn.GCOptions{Grace: 0})
			return err
		},
		"du": func(ws *cairn.Workspace) error {
			_, err := ws.Usage(ctx)
			return err
		},
	} {
		ws := cairn.OpenStore(store)
		ws.SetLimits(cairn.Limits{MaxObjectBytes: limit})
		err := op(ws)
		if !errors.Is(err, cairn.ErrLimit) || !strings.Contains(cairn.LimitHint(err), "MaxObjectBytes") {
			t.Errorf("%s over an object beyond MaxObjectBytes: %v; want a limit error naming it", name, err)
		}
		if read := ws.Requests().BytesRead; read > 2*limit {
			t.Errorf("%s read %d bytes with a limit of %d per object", name, read, limit)
		}
	}
}

// TestDuDepthLimit is issue 13 item 6: du refuses a tree deeper than
// MaxDepth, as show does, instead of recursing without bound.
func TestDuDepthLimit(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	doc := ""
	for i := 0; i < 40; i++ {
		doc += fmt.Sprintf(`{"pad%d":"%s","next":`, i, strings.Repeat("x", 200))
	}
	doc += "null" + strings.Repeat("}", 40)
	w := cairn.OpenStore(store)
	s, _ := w.Session("deep")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(doc)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	ws := cairn.OpenStore(store)
	ws.SetLimits(cairn.Limits{MaxDepth: 8})
	head, err := ws.Resolve(ctx, "deep")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := head.JSON(ctx); !errors.Is(err, cairn.ErrLimit) {
		t.Fatalf("show of the deep state with MaxDepth 8: %v; want a limit error (the tree is not deep enough for this test)", err)
	}
	if _, err := ws.Usage(ctx); !errors.Is(err, cairn.ErrLimit) {
		t.Fatalf("du of the deep state with MaxDepth 8: %v; want a limit error as show gives", err)
	}
	ws.SetLimits(cairn.Limits{})
	if _, err := ws.Usage(ctx); err != nil {
		t.Fatalf("du within the default depth: %v", err)
	}
}
