package hitl

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// Inbox keeps nothing of the sessions it looks at: a server that lists
// the inbox of a store of many sessions does not pin every head (with
// its record) in its workspace for as long as it runs.
func TestInboxPinsNoHeads(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// The sessions are written through another workspace.
	w, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(map[string]string{"note": strings.Repeat("r", 64<<10)})
	const n = 200
	for i := range n {
		s, _ := w.Session(fmt.Sprintf("s%03d", i))
		opts := cairn.CommitOptions{Record: rec}
		if i%50 == 0 {
			opts.Status = cairn.AwaitingInput
		}
		if _, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), opts); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()

	ws, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ws.SetCacheLimit(1 << 20)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p, err := Inbox(ctx, ws)
	if err != nil || len(p) != n/50 {
		t.Fatalf("inbox: %d pending, %v", len(p), err)
	}
	p = nil
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(ws)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 4<<20 {
		t.Fatalf("the workspace holds %d MiB more after listing the inbox of %d sessions of 64 KiB records", grew>>20, n)
	}
}
