package export_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/export"
)

// TestLongLineNeverPartOnFailure: a trajectory too long to hold is read
// twice, its line written a message at a time in the second read; if
// the store changed between the two (here the session pruned), the
// export failed with the line's start already written to its output: on
// stdout, a line no JSON reader takes. Every line is now written whole
// or not at all, and the error names the session and the step that
// changed.
func TestLongLineNeverPartOnFailure(t *testing.T) {
	ctx := context.Background()
	for _, format := range []string{export.OpenAIJSONL, export.ShareGPT, export.ATIF} {
		t.Run(format, func(t *testing.T) {
			ws := emptyStore(t)
			var recs []string
			for i := range 40 {
				recs = append(recs, fmt.Sprintf(`{"messages":[{"role":"user","content":"q%d %s"},{"role":"assistant","content":"a%d"}]}`, i, strings.Repeat("x", 4000), i))
			}
			commitRecords(t, ws, "a-short", recs[:2]...)
			commitRecords(t, ws, "long", recs...)
			defer export.SetHoldForTest(4, 1<<40, 0)()
			// The runs the export reads again, counted; then the same
			// export with long pruned before the fifth-last, part-way
			// through the pass that writes its line.
			reads := 0
			restore := export.SetRereadRunForTest(func(h *cairn.Step) {
				if h.Session == "long" {
					reads++
				}
			})
			var want bytes.Buffer
			if _, err := export.Export(ctx, ws, &want, export.Options{Format: format}); err != nil {
				t.Fatal(err)
			}
			restore()
			// Whole lines, held in memory and, past 1 KiB, in a file,
			// are what was written as it came.
			defer export.SetLineMemForTest(1024)()
			var got bytes.Buffer
			if _, err := export.Export(ctx, ws, &got, export.Options{Format: format, WholeLines: true}); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Fatalf("written in whole lines, the output differs:\n%.300s\nwant\n%.300s", got.String(), want.String())
			}
			n := 0
			defer export.SetRereadRunForTest(func(h *cairn.Step) {
				if h.Session == "long" {
					if n++; n == reads-4 {
						if _, err := ws.Prune(ctx, "long", 10); err != nil {
							t.Error(err)
						}
					}
				}
			})()
			var out bytes.Buffer
			_, err := export.Export(ctx, ws, &out, export.Options{Format: format, WholeLines: true})
			if err == nil {
				t.Fatalf("the export of a session pruned between its two reads succeeded:\n%.300s", out.String())
			}
			t.Log(err)
			if !strings.Contains(err.Error(), "long@23") {
				t.Errorf("the error does not name the step pruned away, long@23: %v", err)
			}
			if !strings.HasSuffix(out.String(), "\n") || strings.Count(out.String(), "\n") != 1 {
				t.Fatalf("output is not a-short's one whole line (%d bytes, %d newlines), ending %q",
					out.Len(), strings.Count(out.String(), "\n"), out.String()[max(0, out.Len()-40):])
			}
			lines(t, out.String())
		})
	}
}
