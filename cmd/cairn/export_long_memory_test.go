package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestLongExportKeepsMemoryFlat: export held a whole trajectory while it
// wrote it, and Parquet all of its rows too, so one long session took
// memory in proportion to its length (1.8 GB of RSS in Parquet, 2.3 to
// 2.4 GB in openai-jsonl and sharegpt, 2.8 GB in atif, for a
// 100,000-step session of 3 KB records). These formats now read a long
// trajectory again and write its rows, messages, turns or ATIF steps a
// run of steps at a time: what they hold is a run of steps, ATIF's tool
// call ids and, for Parquet, the row group being written (8,192 rows,
// compressed). Here 1,500 steps of 32 KB records (48 MB of records)
// must be exported in at most twice their size.
func TestLongExportKeepsMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("commits 48 MB")
	}
	t.Setenv("CAIRN_CACHE_DIR", "off")
	const n, bound = 1500, 96 // MB
	dir := t.TempDir()
	ctx := context.Background()
	ws, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ws.Session("long")
	for i := 1; i <= n; i++ {
		// Text, which Snappy compresses, so the one row group the
		// Parquet writer keeps (8,192 rows, compressed) stays small.
		// Each step answers the tool call of the step before, so an
		// ATIF step waits for the next to be read.
		var msgs []any
		if i > 1 {
			msgs = append(msgs, map[string]any{"role": "tool", "tool_call_id": "c" + strconv.Itoa(i-1), "content": "ok " + strconv.Itoa(i-1)})
		}
		msgs = append(msgs,
			map[string]any{"role": "user", "content": "step " + strconv.Itoa(i)},
			map[string]any{"role": "assistant", "content": strings.Repeat(fmt.Sprintf("step %d says lorem ipsum dolor sit amet. ", i), 800),
				"tool_calls": []any{map[string]any{"id": "c" + strconv.Itoa(i), "name": "look", "arguments": map[string]any{"step": i}}}})
		rec, _ := json.Marshal(map[string]any{"messages": msgs, "tokens": map[string]any{"prompt": 100, "completion": 10}})
		if _, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{Record: rec}); err != nil {
			t.Fatal(err)
		}
	}
	ws.Close()
	for _, format := range []string{"parquet", "openai-jsonl", "sharegpt", "atif"} {
		out := filepath.Join(t.TempDir(), "out."+format)
		live, stderr := liveHeapMB(t, "export", "--format", format, "--out", out, "--store", dir)
		if !bytes.Contains(stderr, []byte("exported 1 trajectory, 1500 steps")) {
			t.Fatalf("cairn export --format %s did not export the session:\n%s", format, stderr)
		}
		t.Logf("cairn export --format %s of %d steps: at most %d MB live after a collection", format, n, live)
		if live > bound {
			t.Errorf("cairn export --format %s of %d steps: %d MB live after a collection, want at most %d MB", format, n, live, bound)
		}
	}
}
