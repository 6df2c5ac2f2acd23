package export_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/cairnlog/cairn/internal/export"
)

// Text holding <, > or & (code, HTML, shell) was written with each of
// them as a six-byte escape (\u003c), as Go's json.Marshal does for
// JSON put in HTML pages: an 8 MiB message of them made a 48 MiB
// openai-jsonl line. Every format writes them as themselves.
func TestTextWrittenWithoutHTMLEscapes(t *testing.T) {
	ctx := context.Background()
	ws := emptyStore(t)
	const text = `if a<b && c>d { echo "<ok>" }`
	commitRecords(t, ws, "code", `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"sh","arguments":{"cmd":"a<b && c>d"}}]},{"role":"tool","tool_call_id":"c1","content":"<ok>"}]}`,
		`{"messages":[{"role":"assistant","content":"if a<b && c>d { echo \"<ok>\" }"}],"outcome":"success"}`)
	fork(ctx, t, ws, "code@1", "other")
	commitRecords(t, ws, "other", `{"messages":[{"role":"assistant","content":"no"}],"outcome":"failure"}`)
	for _, f := range []string{export.OpenAIJSONL, export.ShareGPT, export.ATIF, export.Preference} {
		out, _, _ := run(t, ws, export.Options{Format: f})
		if strings.Contains(out, `\u003c`) || strings.Contains(out, `\u0026`) || !strings.Contains(out, `a<b && c>d`) {
			t.Errorf("%s: %s", f, out)
		}
		lines(t, out) // still JSON
	}
	out, _, _ := run(t, ws, export.Options{Format: export.Parquet, Sessions: []string{"code"}})
	rows, err := parquet.Read[export.StepRow](bytes.NewReader([]byte(out)), int64(len(out)))
	if err != nil || len(rows) != 2 {
		t.Fatalf("parquet: %d rows, %v", len(rows), err)
	}
	for _, r := range rows {
		for _, col := range []*string{r.Messages, r.ToolCalls} {
			if col != nil && (strings.Contains(*col, `\u003c`) || strings.Contains(*col, `\u0026`)) {
				t.Errorf("parquet: %s", *col)
			}
		}
	}
	if c := rows[1].Content; c == nil || *c != text {
		t.Errorf("parquet content %v", c)
	}
}
