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
// 100,000-step session of 3 KB records), and preference pairs every
// branch of a fork point whole. Every format now reads a long
// trajectory again and writes its rows, messages, turns, ATIF steps or
// pairs a run of steps at a time: what it holds is a run of steps,
// ATIF's tool call ids and, for Parquet, the row group being written
// (8,192 rows, compressed) — ATIF even when a tool call is answered
// every step later. Here 1,500 steps of 32 KB records (48 MB of
// records) must be exported in at most twice their size.
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
	// far: the first step's tool call is answered by the last step too,
	// so its ATIF step waits for every step after it.
	commit := func(ws *cairn.Workspace, name string, far bool) {
		s, _ := ws.Session(name)
		for i := 1; i <= n; i++ {
			// Text, which Snappy compresses, so the one row group the
			// Parquet writer keeps (8,192 rows, compressed) stays small.
			// Each step answers the tool call of the step before, so an
			// ATIF step waits for the next to be read.
			var msgs []any
			if i > 1 {
				msgs = append(msgs, map[string]any{"role": "tool", "tool_call_id": "c" + strconv.Itoa(i-1), "content": "ok " + strconv.Itoa(i-1)})
			}
			if far && i == n {
				msgs = append(msgs, map[string]any{"role": "tool", "tool_call_id": "first", "content": "at last"})
			}
			calls := []any{map[string]any{"id": "c" + strconv.Itoa(i), "name": "look", "arguments": map[string]any{"step": i}}}
			if far && i == 1 {
				calls = append(calls, map[string]any{"id": "first", "name": "wait"})
			}
			msgs = append(msgs,
				map[string]any{"role": "user", "content": "step " + strconv.Itoa(i)},
				map[string]any{"role": "assistant", "content": strings.Repeat(fmt.Sprintf("step %d says lorem ipsum dolor sit amet. ", i), 800),
					"tool_calls": calls})
			rec, _ := json.Marshal(map[string]any{"messages": msgs, "tokens": map[string]any{"prompt": 100, "completion": 10}})
			if _, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{Record: rec}); err != nil {
				t.Fatal(err)
			}
		}
	}
	commit(ws, "long", false)
	ws.Close()
	for _, format := range []string{"parquet", "openai-jsonl", "sharegpt", "atif", "atif far", "preference"} {
		want := "exported 1 trajectory, 1500 steps"
		args := []string{"export", "--format", format, "--store", dir}
		if format == "atif far" {
			ws, err := cairn.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			commit(ws, "far", true)
			ws.Close()
			args = []string{"export", "--format", "atif", "--session", "far", "--store", dir}
		}
		if format == "preference" {
			// A fork from the last step and a step more of the
			// session, each with an outcome, make one pair whose
			// prompt is every step (made last, not to change the
			// trajectory the other formats export).
			ws, err := cairn.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			from, err := ws.ReadStep(ctx, "long", n)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ws.Fork(ctx, from, "long-alt"); err != nil {
				t.Fatal(err)
			}
			for name, outcome := range map[string]string{"long": "failure", "long-alt": "success"} {
				s, _ := ws.Session(name)
				rec := fmt.Sprintf(`{"messages":[{"role":"tool","tool_call_id":"c%d","content":"ok"},{"role":"assistant","content":"%s"}],"outcome":%q}`, n, name, outcome)
				if _, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{Record: []byte(rec)}); err != nil {
					t.Fatal(err)
				}
			}
			ws.Close()
			want = "exported 1 pair"
		}
		out := filepath.Join(t.TempDir(), "out")
		live, stderr := liveHeapMB(t, append(args, "--out", out)...)
		if !bytes.Contains(stderr, []byte(want)) {
			t.Fatalf("cairn export --format %s did not export the session:\n%s", format, stderr)
		}
		t.Logf("cairn export --format %s of %d steps: at most %d MB live after a collection", format, n, live)
		if live > bound {
			t.Errorf("cairn export --format %s of %d steps: %d MB live after a collection, want at most %d MB", format, n, live, bound)
		}
	}
}

// TestLongAdapterExportKeepsMemoryFlat: a framework adapter's session
// (here the ADK session service's: every step's state holds the
// session's events so far, its record only names the event) was read
// whole on export however long, its newest state, its events and their
// messages all held at once, while every other session too long to hold
// is read a run of steps at a time. It is now read so too, its events
// handed out one at a time as the newest state is written out: 1,500
// events of 32 KB (48 MB of conversation) must be exported in at most
// twice their size. Parquet is left out: whatever the session, it holds
// the row group it writes (up to 8,192 rows; here every row, each
// answer in two columns), 82 to 116 MB live in runs here, not flat in
// the session's length below 8,192 steps.
func TestLongAdapterExportKeepsMemoryFlat(t *testing.T) {
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
	s, _ := ws.Session("adk")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"adk_session":1,"app":"app","user":"u","id":"s","state":{},"events":[]}`)),
		cairn.CommitOptions{Record: []byte(`{"adk":"create"}`)}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		role, text := "user", fmt.Sprintf("question %d", i)
		ev := map[string]any{"ID": fmt.Sprintf("ev-%d", i), "Author": "user", "Partial": false}
		if i%2 == 0 {
			role, text = "model", strings.Repeat(fmt.Sprintf("answer %d says lorem ipsum dolor sit amet. ", i), 1600)
			ev["Author"], ev["ModelVersion"] = "agent", "gemini-x"
			ev["UsageMetadata"] = map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 10}
		}
		ev["Content"] = map[string]any{"role": role, "parts": []any{map[string]any{"text": text}}}
		patch, _ := json.Marshal([]any{map[string]any{"op": "add", "path": "/events/-", "value": ev}})
		rec := fmt.Sprintf(`{"adk":"event","event":"ev-%d"}`, i)
		if _, err := s.Commit(ctx, cairn.Patch(patch), cairn.CommitOptions{Record: []byte(rec)}); err != nil {
			t.Fatal(err)
		}
	}
	ws.Close()
	for _, format := range []string{"openai-jsonl", "sharegpt", "atif"} {
		out := filepath.Join(t.TempDir(), "out")
		live, stderr := liveHeapMB(t, "export", "--format", format, "--store", dir, "--out", out)
		if want := fmt.Sprintf("exported 1 trajectory, %d steps", n+1); !bytes.Contains(stderr, []byte(want)) {
			t.Fatalf("cairn export --format %s did not export the session:\n%s", format, stderr)
		}
		t.Logf("cairn export --format %s of %d ADK events: at most %d MB live after a collection", format, n, live)
		if live > bound {
			t.Errorf("cairn export --format %s of %d ADK events: %d MB live after a collection, want at most %d MB", format, n, live, bound)
		}
	}
}
