package cairn_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestLoweredLimitsRefuseCachedState: limits lowered by SetLimits after
// a read held only for objects not yet read. A state read once (its
// objects cached, its spill packs found to fit) was served whole again
// past a MaxObjectBytes it was now over, and a state whose objects had
// left the cache failed half written. Lowered limits now refuse such a
// state, naming the limit, with nothing written.
func TestLoweredLimitsRefuseCachedState(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	noise := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return b
	}
	ws := cairn.OpenStore(mem.New())
	const limit = 256 << 10

	// A JSON state in one step object of about 1 MiB.
	js, _ := ws.Session("json")
	hex := noise(1 << 20)
	for i, b := range hex {
		hex[i] = "0123456789abcdef"[b%16]
	}
	doc := `{"a":"` + string(hex) + `"}`
	if _, err := js.Commit(ctx, cairn.JSON([]byte(doc)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	// A directory state with a large file, in spill packs.
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "big"), noise(12<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, _ := ws.Session("dir")
	if _, err := ds.Commit(ctx, cairn.Dir(src), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}

	// Read both once, under the default limits: their objects are cached.
	jh, err := ws.Resolve(ctx, "json")
	if err != nil {
		t.Fatal(err)
	}
	if err := jh.WriteJSON(ctx, new(bytes.Buffer)); err != nil {
		t.Fatal(err)
	}
	dh, err := ws.Resolve(ctx, "dir")
	if err != nil {
		t.Fatal(err)
	}
	if err := dh.Checkout(ctx, filepath.Join(t.TempDir(), "out")); err != nil {
		t.Fatal(err)
	}

	if err := ws.SetLimits(cairn.Limits{MaxObjectBytes: limit}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = jh.WriteJSON(ctx, &out)
	if !errors.Is(err, cairn.ErrLimit) || !strings.Contains(cairn.LimitHint(err), "MaxObjectBytes") {
		t.Errorf("a JSON state over a lowered MaxObjectBytes: %v; want a limit error naming it", err)
	}
	if out.Len() > 0 {
		t.Errorf("a JSON state over a lowered MaxObjectBytes wrote %d bytes; want none", out.Len())
	}
	dir := filepath.Join(t.TempDir(), "out")
	err = dh.Checkout(ctx, dir)
	if !errors.Is(err, cairn.ErrLimit) || !strings.Contains(cairn.LimitHint(err), "MaxObjectBytes") {
		t.Errorf("a directory state over a lowered MaxObjectBytes: %v; want a limit error naming it", err)
	}
	if _, serr := os.Stat(dir); serr == nil {
		t.Errorf("a directory state over a lowered MaxObjectBytes wrote %s; want nothing", dir)
	}
}
