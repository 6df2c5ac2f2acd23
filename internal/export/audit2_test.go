package export_test

import (
	"bytes"
	"context"
	"encoding/binary"
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
