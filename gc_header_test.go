package cairn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/manifest"
)

// getLog records the lengths asked of every Get of one key.
type getLog struct {
	cas.Store
	key string
	mu  sync.Mutex
	ns  []int64
}

func (g *getLog) Get(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if key == g.key {
		g.mu.Lock()
		g.ns = append(g.ns, n)
		g.mu.Unlock()
	}
	return g.Store.Get(ctx, key, off, n)
}

// TestGCLongStepHeader: gc reads an older step's manifest and index from
// the first 64 KiB of its object; a step whose manifest (a long record)
// or index (thousands of blobs) runs past that is read whole, and
// checked: a byte changed beyond the first 64 KiB of its header stops
// the run, naming the step, and deletes nothing.
func TestGCLongStepHeader(t *testing.T) {
	long := map[string]func(s *cairn.Session) error{
		"record": func(s *cairn.Session) error {
			rec, _ := json.Marshal(map[string]string{"note": strings.Repeat("x", 100<<10)})
			_, err := s.Commit(context.Background(), cairn.JSON([]byte(`{"a":1}`)), cairn.CommitOptions{Record: rec})
			return err
		},
		"index": func(s *cairn.Session) error {
			var b strings.Builder
			b.WriteString(`{"a":[`)
			for i := 0; i < 3000; i++ {
				if i > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, `"element %d %s"`, i, strings.Repeat("z", 40))
			}
			b.WriteString(`]}`)
			_, err := s.Commit(context.Background(), cairn.JSON([]byte(b.String())), cairn.CommitOptions{})
			return err
		},
	}
	for name, commit := range long {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			store := mem.New()
			ws := cairn.OpenStore(store)
			s, err := ws.Session("big")
			if err != nil {
				t.Fatal(err)
			}
			if err := commit(s); err != nil {
				t.Fatal(err)
			}
			commitN(t, ws, "big", "big", 2, 3)
			commitN(t, ws, "g", "g", 1, 2)
			if _, err := ws.Remove(ctx, "g"); err != nil {
				t.Fatal(err)
			}
			key := manifest.StepKey("big", 1)
			orig, err := store.Get(ctx, key, 0, -1)
			if err != nil {
				t.Fatal(err)
			}
			obj, err := pack.Parse(orig, key)
			if err != nil {
				t.Fatal(err)
			}
			header := len(orig) - cas.IDSize // manifest and index end where the blobs start
			for _, e := range obj.Entries {
				header -= int(e.StoredLen)
			}
			if header < 80<<10 {
				t.Fatalf("big@1's header is %d bytes, not past the first 64 KiB", header)
			}
			logged := &getLog{Store: store, key: key}
			if r := mustGC(t, cairn.OpenStore(logged), cairn.GCOptions{Grace: 0, Now: slotsAged}); r.LiveSteps != 3 {
				t.Fatalf("gc = %+v, want 3 live steps", r)
			}
			if len(logged.ns) != 2 || logged.ns[0] != 64<<10 || logged.ns[1] >= 0 && logged.ns[1] < int64(len(orig)) {
				t.Errorf("gc read big@1 with Gets of %v bytes, want 64 KiB, then the whole object", logged.ns)
			}
			// A byte of the header past the first 64 KiB: in the record,
			// or in the index.
			bad := append([]byte(nil), orig...)
			bad[header-10] ^= 0x01
			if err := store.Put(ctx, key, bad, cas.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			rep, err := cairn.OpenStore(store).GC(ctx, cairn.GCOptions{Grace: 0, Now: slotsAged})
			if !errors.Is(err, cairn.ErrCorrupt) || !strings.Contains(err.Error(), "big") || !strings.Contains(err.Error(), "nothing deleted") {
				t.Fatalf("gc with big@1 damaged past its first 64 KiB: %+v, %v", rep, err)
			}
			if _, err := store.Stat(ctx, manifest.StepKey("g", 1)); err != nil {
				t.Fatalf("g@1 after the refused run: %v", err)
			}
			if err := store.Put(ctx, key, orig, cas.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			if r := mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged}); r.LiveSteps != 3 || r.Deleted != 2 {
				t.Fatalf("gc after the repair = %+v, want 3 live steps and g's 2 deleted", r)
			}
			mustVerify(t, ws)
		})
	}
}
