package export_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/export"
)

// A removed session is no trajectory: its tombstone is not exported as a
// one-step trajectory, and a removed fork does not hide the session it
// was forked from (that session is a leaf again).
func TestRemovedSessionsAreNotExported(t *testing.T) {
	ctx := context.Background()
	ws, _ := forkedWorkload(t)
	// b-next was forked at b's head: b was not a leaf until b-next went.
	if _, err := ws.Remove(ctx, "b-next"); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Remove(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{export.OpenAIJSONL, export.ATIF, export.Parquet} {
		for _, branches := range []string{export.Leaves, export.All} {
			_, sum, heads := run(t, ws, export.Options{Format: format, Branches: branches})
			got := headNames(heads)
			if slices.Contains(got, "b-next") || slices.Contains(got, "c") {
				t.Errorf("%s --branches %s exported removed sessions: %v", format, branches, got)
			}
			if !slices.Contains(got, "b") {
				t.Errorf("%s --branches %s: b, whose only fork was removed, is missing: %v", format, branches, got)
			}
			for _, n := range sum.Skipped {
				if slices.Contains(n.Names, "b-next") || slices.Contains(n.Names, "c") {
					t.Errorf("%s: removed session named as skipped: %v", format, n)
				}
			}
		}
	}
}

// A trajectory whose older history was pruned says so: in its metadata
// (openai-jsonl, sharegpt), its ATIF extra, its Parquet rows, and a note.
func TestPrunedTrajectoryIsMarkedTruncated(t *testing.T) {
	ctx := context.Background()
	ws, _ := forkedWorkload(t)
	if _, err := ws.Prune(ctx, "a-alt2", 1); err != nil {
		t.Fatal(err)
	}
	truncatedNote := func(sum export.Summary) bool {
		for _, n := range sum.LeftOut {
			if strings.Contains(n.Reason, "prune") && slices.Contains(n.Names, "a-alt2") && !slices.Contains(n.Names, "a") {
				return true
			}
		}
		return false
	}
	for _, format := range []string{export.OpenAIJSONL, export.ShareGPT, export.ATIF} {
		out, sum, heads := run(t, ws, export.Options{Format: format})
		for _, o := range lines(t, out) {
			var where map[string]any
			var session string
			if format == export.ATIF {
				where = o["extra"].(map[string]any)
				session = o["session_id"].(string)
			} else {
				where = o["metadata"].(map[string]any)
				session = where["session"].(string)
			}
			if got, want := where["truncated"] == true, session == "a-alt2"; got != want {
				t.Errorf("%s %s: truncated %v, want %v", format, session, where["truncated"], want)
			}
		}
		if slices.Contains(headNames(heads), "a-alt2") && !truncatedNote(sum) {
			t.Errorf("%s: no note names a-alt2's pruned history: %+v", format, sum.LeftOut)
		}
	}
}

func TestPrunedTrajectoryParquetColumn(t *testing.T) {
	ctx := context.Background()
	ws, _ := forkedWorkload(t)
	if _, err := ws.Prune(ctx, "a-alt2", 1); err != nil {
		t.Fatal(err)
	}
	out, _, _ := run(t, ws, export.Options{Format: export.Parquet})
	rows := parquetRows(t, []byte(out))
	seen := 0
	for _, r := range rows {
		want := r.Trajectory == "a-alt2"
		if r.TrajectoryTruncated != want {
			t.Errorf("row %s@%d of %s: trajectory_truncated %v", r.Session, r.Step, r.Trajectory, r.TrajectoryTruncated)
		}
		if want {
			seen++
		}
	}
	if seen == 0 {
		t.Fatal("no rows for a-alt2")
	}
}

// parquetRows reads a Parquet export back with parquet-go.
type truncRow struct {
	Trajectory          string `parquet:"trajectory"`
	Session             string `parquet:"session"`
	Step                int64  `parquet:"step"`
	TrajectoryTruncated bool   `parquet:"trajectory_truncated"`
}

func parquetRows(t *testing.T, b []byte) []truncRow {
	t.Helper()
	rows, err := parquet.Read[truncRow](bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// bigRun commits one step whose assistant message is n bytes of text,
// with a model name and a label value of n bytes too.
func bigRun(t *testing.T, ws *cairn.Workspace, name string, n int) {
	t.Helper()
	big := strings.Repeat("0123456789abcdef", n/16)
	s, err := ws.Session(name)
	if err != nil {
		t.Fatal(err)
	}
	opts := rec(t, cairn.Record{Model: big, Labels: map[string]string{"k": big}, Outcome: big, Messages: []cairn.Message{
		{Role: "user", Content: "go"}, {Role: "assistant", Content: big}}})
	if _, err := s.Commit(context.Background(), cairn.JSON([]byte(`{}`)), opts); err != nil {
		t.Fatal(err)
	}
}

// A Parquet file's footer does not copy huge texts as min/max
// statistics: one 1 MiB message made the footer megabytes long.
func TestParquetFooterStaysSmallWithHugeTexts(t *testing.T) {
	ws, err := cairn.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	bigRun(t, ws, "big", 1<<20)
	out, _, _ := run(t, ws, export.Options{Format: export.Parquet})
	b := []byte(out)
	if len(b) < 12 || string(b[len(b)-4:]) != "PAR1" {
		t.Fatal("not a Parquet file")
	}
	footer := binary.LittleEndian.Uint32(b[len(b)-8:])
	if footer > 64<<10 {
		t.Errorf("footer of %d bytes for one row: statistics copy the huge texts", footer)
	}
	// Still readable, with the text whole.
	rows, err := parquet.Read[export.StepRow](bytes.NewReader(b), int64(len(b)))
	if err != nil || len(rows) != 1 || rows[0].Content == nil || len(*rows[0].Content) != 1<<20 {
		t.Fatalf("read back: %d rows, %v", len(rows), err)
	}
}

// A Parquet file's pages do not copy huge texts either: parquet-go
// writes a page's min and max in its header unless told not to, so one
// 1 MiB message (in content, messages, record and the other free-text
// columns) made a file of 28 MiB, an 8 MiB one of 100 MiB, the copies
// uncompressed beside the compressed values.
func TestParquetPagesDoNotCopyHugeTexts(t *testing.T) {
	ws := emptyStore(t)
	bigRun(t, ws, "big", 1<<20)
	out, _, _ := run(t, ws, export.Options{Format: export.Parquet})
	big := strings.Repeat("0123456789abcdef", (1<<20)/16)
	if n := strings.Count(out, big); n > 0 || len(out) > 1<<20 {
		t.Errorf("a file of %d bytes holding %d uncompressed copies of the 1 MiB text", len(out), n)
	}
}

// blockingWriter blocks every Write until release is closed.
type blockingWriter struct{ release chan struct{} }

func (w blockingWriter) Write(b []byte) (int, error) { <-w.release; return len(b), nil }

// Export reads ahead a bounded number of bytes, not only of sessions:
// with the writer stuck on the first trajectory, 48 sessions of 1.3 MiB
// records were all read and held (16 workers, a 32-session queue).
func TestExportReadAheadBoundedByBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("commits 64 MiB")
	}
	ws, err := cairn.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	const n, size = 48, 1 << 20
	for i := range n {
		bigRun(t, ws, fmt.Sprintf("s%02d", i), size/3)
	}
	ws.SetCacheLimit(1 << 20)
	before := ws.Requests()
	w := blockingWriter{release: make(chan struct{})}
	type result struct {
		sum export.Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := export.Export(context.Background(), ws, w, export.Options{Format: export.OpenAIJSONL, Branches: export.All, Workers: 16})
		done <- result{sum, err}
	}()
	// Wait until reading stops: everything the export reads ahead is read.
	var read int64
	for stable := 0; stable < 20; {
		time.Sleep(10 * time.Millisecond)
		now := ws.Requests().Sub(before).BytesRead
		if now == read {
			stable++
		} else {
			read, stable = now, 0
		}
	}
	close(w.release)
	r := <-done
	if r.err != nil || r.sum.Trajectories != n {
		t.Fatalf("exported %d of %d: %v", r.sum.Trajectories, n, r.err)
	}
	t.Logf("read %d MiB ahead of a stuck writer", read>>20)
	if read > 40<<20 {
		t.Errorf("read %d MiB ahead of a stuck writer: read-ahead is not bounded by bytes", read>>20)
	}
}

// harborATIFError applies the rules Harbor's ATIF validator (its
// Trajectory and Step models) enforces beyond field types: at least one
// step; step_id sequential from 1; tool_calls, metrics, model_name and
// reasoning_content on agent steps only; unique tool_call_ids in a step;
// and each observation result's source_call_id, if not null, one of the
// same step's tool_call_ids.
func harborATIFError(doc map[string]any) error {
	steps := asList(doc["steps"])
	if len(steps) == 0 {
		return fmt.Errorf("steps: at least one step is required")
	}
	for i, s := range steps {
		s := s.(map[string]any)
		if s["step_id"].(float64) != float64(i+1) {
			return fmt.Errorf("steps[%d].step_id: expected %d, got %v", i, i+1, s["step_id"])
		}
		if s["source"] != "agent" {
			for _, k := range []string{"tool_calls", "metrics", "model_name", "reasoning_content"} {
				if _, ok := s[k]; ok {
					return fmt.Errorf("step %d: %s is only for agent steps", i+1, k)
				}
			}
		}
		ids := map[string]bool{}
		for _, tc := range asList(s["tool_calls"]) {
			id := tc.(map[string]any)["tool_call_id"].(string)
			if ids[id] {
				return fmt.Errorf("step %d has duplicate tool_call_id %q", i+1, id)
			}
			ids[id] = true
		}
		if obs, ok := s["observation"].(map[string]any); ok {
			for _, r := range asList(obs["results"]) {
				if id, ok := r.(map[string]any)["source_call_id"].(string); ok && !ids[id] {
					return fmt.Errorf("observation result references source_call_id %q which is not found in step %d's tool_calls", id, i+1)
				}
			}
		}
	}
	return nil
}

// ATIF documents pass Harbor's validator: a tool result goes to the
// agent step that made the call (not merely the last agent step), a
// result for no known call keeps its id out of source_call_id, and a
// trajectory with nothing ATIF can hold is skipped, not written with no
// steps.
func TestATIFPassesHarborValidator(t *testing.T) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	call := func(id string) cairn.ToolCall {
		return cairn.ToolCall{ID: id, Name: "ls", Arguments: json.RawMessage(`{}`)}
	}
	s, _ := ws.Session("calls")
	for _, r := range []cairn.Record{
		{Messages: []cairn.Message{{Role: "user", Content: "go"},
			{Role: "assistant", ToolCalls: []cairn.ToolCall{call("c1"), call("c2")}},
			{Role: "assistant", Content: "and", ToolCalls: []cairn.ToolCall{call("c3")}},
			{Role: "tool", ToolCallID: "c1", Content: "one"},
			{Role: "tool", ToolCallID: "c3", Content: "three"},
		}},
		{Messages: []cairn.Message{{Role: "tool", ToolCallID: "c2", Content: "two, late"},
			{Role: "tool", ToolCallID: "zz", Content: "for no call"},
			{Role: "assistant", Content: "done"}}},
	} {
		if _, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), rec(t, r)); err != nil {
			t.Fatal(err)
		}
	}
	empty, _ := ws.Session("empty")
	if _, err := empty.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	out, sum, heads := runLong(t, ws, export.Options{Format: export.ATIF})
	docs := lines(t, out)
	for _, d := range docs {
		if err := harborATIFError(d); err != nil {
			t.Errorf("%s: %v", d["session_id"], err)
		}
	}
	if got := headNames(heads); !slices.Equal(got, []string{"calls"}) {
		t.Errorf("exported %v, want only calls", got)
	}
	named := false
	for _, n := range sum.Skipped {
		named = named || slices.Contains(n.Names, "empty")
	}
	if !named {
		t.Errorf("the empty trajectory is not named as skipped: %+v", sum.Skipped)
	}
	if len(docs) == 1 {
		// Every result is kept, with its text.
		var results []string
		for _, s := range asList(docs[0]["steps"]) {
			if obs, ok := s.(map[string]any)["observation"].(map[string]any); ok {
				for _, r := range asList(obs["results"]) {
					results = append(results, r.(map[string]any)["content"].(string))
				}
			}
		}
		slices.Sort(results)
		if want := []string{"for no call", "one", "three", "two, late"}; !slices.Equal(results, want) {
			t.Errorf("observation results %q, want %q", results, want)
		}
	}
}

// A removed fork whose name was used again for a new session (before gc
// swept its old steps) no longer continues the session it was forked
// from: that session is a leaf again.
func TestRemovedForkNameReused(t *testing.T) {
	ctx := context.Background()
	ws, _ := forkedWorkload(t)
	if _, err := ws.Remove(ctx, "b-next"); err != nil {
		t.Fatal(err)
	}
	s, _ := ws.Session("b-next")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), rec(t, cairn.Record{Messages: []cairn.Message{{Role: "user", Content: "anew"}}})); err != nil {
		t.Fatal(err)
	}
	_, _, heads := run(t, ws, export.Options{Format: export.ATIF})
	if got := headNames(heads); !slices.Contains(got, "b") || !slices.Contains(got, "b-next") {
		t.Errorf("exported %v, want b (a leaf again) and the new b-next", got)
	}
}

// How a record breaks the convention is said in the record's terms,
// never with Go type names.
func TestBrokenRecordSaidInRecordTerms(t *testing.T) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for name, r := range map[string]string{"x": `{"messages":5}`, "y": `{"messages":[{"role":"user","content":5}]}`} {
		s, _ := ws.Session(name)
		if _, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{Record: json.RawMessage(r)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, format := range []string{export.OpenAIJSONL, export.ATIF, export.Parquet} {
		_, sum, _ := run(t, ws, export.Options{Format: format})
		notes := append(append([]export.Note{}, sum.Skipped...), sum.LeftOut...)
		if len(notes) == 0 {
			t.Fatalf("%s: nothing noted", format)
		}
		for _, n := range notes {
			if strings.Contains(n.Example, "Go ") || strings.Contains(n.Example, "cairn.") || !strings.Contains(n.Example, "messages") {
				t.Errorf("%s: %q", format, n.Example)
			}
		}
	}
}

// Preference pairs from a branch whose older history was pruned say so
// (the TRL format has no field for it: a note, on stderr and in the
// manifest's summary).
func TestPreferenceFromPrunedBranchNoted(t *testing.T) {
	ctx := context.Background()
	ws, _ := forkedWorkload(t)
	// a (4 steps), a-alt (3 to 5) and a-alt2 (3 to 4) branch at step 3.
	// With each one's history before step 3 pruned, no whole path to the
	// fork point is left for the prompt.
	for name, keep := range map[string]uint64{"a": 2, "a-alt": 3, "a-alt2": 2} {
		if _, err := ws.Prune(ctx, name, keep); err != nil {
			t.Fatal(err)
		}
	}
	_, sum, _ := runLong(t, ws, export.Options{Format: export.Preference})
	if sum.Pairs == 0 {
		t.Fatal("no pairs")
	}
	for _, n := range sum.LeftOut {
		if strings.Contains(n.Reason, "prune") && strings.Contains(n.Reason, "prompt") {
			return
		}
	}
	t.Errorf("no note of the pairs' pruned prompt: %+v", sum.LeftOut)
}
