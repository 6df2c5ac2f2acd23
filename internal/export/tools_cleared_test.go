package export_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"

	"github.com/cairnlog/cairn/internal/export"
)

// TestEmptyToolListClearsTools: docs/records.md makes the newest step
// listing tools define them, and "tools": [] lists none — no tools from
// then on. The chat formats skipped the empty list and kept the older
// step's tools, so the example taught calls of tools the model no
// longer had. "tools": null is no listing, and keeps them.
func TestEmptyToolListClearsTools(t *testing.T) {
	ws := emptyStore(t)
	first := `{"messages":[{"role":"user","content":"q"}],"tools":[{"type":"function","function":{"name":"read","parameters":{"type":"object"}}}]}`
	commitRecords(t, ws, "cleared", first, `{"messages":[{"role":"assistant","content":"a"}],"tools":[]}`)
	commitRecords(t, ws, "kept", first, `{"messages":[{"role":"assistant","content":"a"}],"tools":null}`)
	for _, f := range []string{export.OpenAIJSONL, export.ShareGPT} {
		out, _, _ := run(t, ws, export.Options{Format: f})
		objs := lines(t, out)
		if len(objs) != 2 {
			t.Fatalf("%s: %d lines, want 2", f, len(objs))
		}
		if tools, ok := objs[0]["tools"]; ok {
			t.Errorf("%s: cleared keeps the tools it cleared: %v", f, tools)
		}
		if _, ok := objs[1]["tools"]; !ok {
			t.Errorf("%s: kept lost its tools to a null", f)
		}
	}
}

// TestMarshalRecordKeepsEmptyToolList: cairn.MarshalRecord dropped an
// empty Tools list (omitempty), so a Go agent could not record "no
// tools from now on"; nil still writes no key.
func TestMarshalRecordKeepsEmptyToolList(t *testing.T) {
	b, err := cairn.MarshalRecord(&cairn.Record{Tools: []json.RawMessage{}})
	if err != nil || !strings.Contains(string(b), `"tools":[]`) {
		t.Errorf("empty Tools: %s, %v", b, err)
	}
	if b, _ := cairn.MarshalRecord(&cairn.Record{Model: "m"}); strings.Contains(string(b), "tools") {
		t.Errorf("nil Tools written: %s", b)
	}
}
