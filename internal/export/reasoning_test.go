package export_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/export"
)

// TestReasoningCarried: an assistant message's reasoning
// (docs/records.md) was dropped by openai-jsonl and preference export,
// and sharegpt dropped it without a word. openai-jsonl and preference
// carry it as the assistant message's reasoning_content (the field
// reasoning models' chat templates and several trainers read); ATIF has
// reasoning_content on agent steps; Parquet keeps it in messages;
// sharegpt has no place for it and says so.
func TestReasoningCarried(t *testing.T) {
	ctx := t.Context()
	ws := emptyStore(t)
	commitRecords(t, ws, "r",
		`{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","reasoning":"look first","tool_calls":[{"id":"c1","name":"read","arguments":{}}]},{"role":"tool","tool_call_id":"c1","content":"x"}]}`)
	fork(ctx, t, ws, "r@1", "r-alt")
	commitRecords(t, ws, "r", `{"messages":[{"role":"assistant","content":"bad","reasoning":"guess"}],"outcome":"failure"}`)
	commitRecords(t, ws, "r-alt", `{"messages":[{"role":"assistant","content":"good","reasoning":"x means yes"}],"outcome":"success"}`)

	out, _, _ := run(t, ws, export.Options{Format: export.OpenAIJSONL})
	for _, o := range lines(t, out) {
		var got []string
		for _, m := range asList(o["messages"]) {
			m := m.(map[string]any)
			if rc, ok := m["reasoning_content"]; ok {
				if m["role"] != "assistant" {
					t.Errorf("openai-jsonl: reasoning_content on a %v message", m["role"])
				}
				got = append(got, rc.(string))
			}
		}
		if len(got) != 2 || got[0] != "look first" {
			t.Errorf("openai-jsonl: reasoning %q, want the two assistant messages'", got)
		}
	}

	out, sum, _ := runLong(t, ws, export.Options{Format: export.Preference})
	if sum.Pairs != 1 || !strings.Contains(out, `"reasoning_content":"x means yes"`) || !strings.Contains(out, `"reasoning_content":"guess"`) ||
		!strings.Contains(out, `"reasoning_content":"look first"`) {
		t.Errorf("preference: reasoning lost: %s", out)
	}

	out, _, _ = run(t, ws, export.Options{Format: export.ATIF})
	if !strings.Contains(out, `"reasoning_content":"look first"`) || !strings.Contains(out, `"reasoning_content":"x means yes"`) {
		t.Errorf("atif: reasoning lost: %s", out)
	}

	out, sum, _ = run(t, ws, export.Options{Format: export.ShareGPT})
	if strings.Contains(out, "look first") || noted(sum.LeftOut, "reasoning", "r") == nil {
		t.Errorf("sharegpt: reasoning left out without a note: left out %+v: %s", sum.LeftOut, out)
	}

	var buf bytes.Buffer
	if _, err := export.Export(ctx, ws, &buf, export.Options{Format: export.Parquet}); err != nil {
		t.Fatal(err)
	}
	rows, err := parquet.Read[export.StepRow](bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil || len(rows) == 0 || rows[0].Messages == nil || !strings.Contains(*rows[0].Messages, `"reasoning":"look first"`) {
		t.Errorf("parquet: reasoning not in messages (%v)", err)
	}
}

// TestReasoningContentInRecord: an agent that records the assistant
// message as an OpenAI-compatible reasoning API returns it puts the
// reasoning in reasoning_content; it was ignored, and lost by every
// format. It is read as the message's reasoning (reasoning wins if a
// message has both).
func TestReasoningContentInRecord(t *testing.T) {
	ws := emptyStore(t)
	commitRecords(t, ws, "r", `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a","reasoning_content":"think"}]}`,
		`{"messages":[{"role":"user","content":"q2"},{"role":"assistant","content":"b","reasoning":"mine","reasoning_content":"theirs"}]}`)
	for _, f := range []string{export.OpenAIJSONL, export.ATIF} {
		out, _, _ := run(t, ws, export.Options{Format: f})
		if !strings.Contains(out, `"reasoning_content":"think"`) || !strings.Contains(out, `"reasoning_content":"mine"`) || strings.Contains(out, "theirs") {
			t.Errorf("%s: %s", f, out)
		}
	}
	if _, err := cairn.ParseRecord([]byte(`{"messages":[{"role":"assistant","content":"a","reasoning_content":1}]}`)); err == nil ||
		!strings.Contains(err.Error(), "reasoning_content") || strings.Contains(err.Error(), "Message") {
		t.Errorf("a number as reasoning_content: %v", err)
	}
}
