package export_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/export"
	"github.com/cairnlog/cairn/internal/jsontext"
)

// TestHugeNumbersNotExported: a number no double holds (1e400) is valid
// JSON text but no reader of a trainer takes it (encoding/json refuses
// it, Python's json reads infinity and writes Infinity back). In a
// tool definition or a tool call's arguments — an object, or a string
// holding its JSON — the chat formats copied it verbatim into a line;
// such a record does not follow the convention, so they skip the
// session and say why. ATIF, which carries a raw record in
// extra.record, carries one holding such a number as text. Every line
// written reads with encoding/json (lines).
func TestHugeNumbersNotExported(t *testing.T) {
	ws := emptyStore(t)
	const tool = `{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":{"maximum":%s}}}}}`
	call := func(args string) string {
		return `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":` + args + `}}]},{"role":"tool","tool_call_id":"c1","content":"r"},{"role":"assistant","content":"done"}]}`
	}
	huge := map[string]string{
		"tools":       `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}],"tools":[` + fmt.Sprintf(tool, "1e400") + `]}`,
		"args-object": call(`{"x":-1e400}`),
		"args-text":   call(`"{\"x\":1.8e308}"`),
	}
	for name, r := range huge {
		commitRecords(t, ws, name, r)
	}
	// What a double does hold (or rounds to zero) is kept.
	commitRecords(t, ws, "small", `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}],"tools":[`+fmt.Sprintf(tool, "1e-400")+`]}`)
	commitRecords(t, ws, "raw", `{"other":1e400}`)
	for _, f := range []string{export.OpenAIJSONL, export.ShareGPT, export.ATIF} {
		out, sum, _ := run(t, ws, export.Options{Format: f})
		objs := lines(t, out)
		if f != export.ATIF && (strings.Contains(out, "e400") || strings.Contains(out, "e308")) {
			t.Errorf("%s: a number no double holds written: %s", f, out)
		}
		if f == export.ATIF {
			// Every session is written; the raw records as text.
			if len(objs) != 5 || !strings.Contains(out, `"record_text":"{\"other\":1e400}"`) {
				t.Errorf("atif: %d lines, want 5 with the raw record as text: %s", len(objs), out)
			}
			continue
		}
		if len(objs) != 1 {
			t.Errorf("%s: %d lines, want only small's: %s", f, len(objs), out)
		}
		var skipped []string
		for _, n := range sum.Skipped {
			if strings.Contains(n.Example, "too large for a double") {
				skipped = append(skipped, n.Names...)
			}
		}
		if len(skipped) != len(huge) {
			t.Errorf("%s: sessions skipped for their numbers: %v, want %d (%+v)", f, skipped, len(huge), sum.Skipped)
		}
	}
}

// TestLoneSurrogatesNotExported: a \u escape that is half a UTF-16
// surrogate pair (\ud800 alone) is valid JSON text but no Unicode:
// encoding/json reads U+FFFD, Python's json a string it cannot write as
// UTF-8. In a tool definition or a call's arguments (an object, or the
// JSON text of a string) the chat formats copied it into the line; such
// a record does not follow the convention and the session is skipped,
// named. In a message's text it is read as U+FFFD (the line is UTF-8),
// and ATIF carries a raw record holding one as text.
func TestLoneSurrogatesNotExported(t *testing.T) {
	ws := emptyStore(t)
	call := func(args string) string {
		return `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"f","arguments":` + args + `}]},{"role":"tool","tool_call_id":"c1","content":"r"},{"role":"assistant","content":"done"}]}`
	}
	lone := map[string]string{
		"tools":       `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}],"tools":[{"type":"function","function":{"name":"f","description":"\ud800"}}]}`,
		"args-object": call(`{"x":"\udc00"}`),
		"args-text":   call(`"{\"x\":\"\\ud800\"}"`),
	}
	for name, r := range lone {
		commitRecords(t, ws, name, r)
	}
	commitRecords(t, ws, "content", `{"messages":[{"role":"user","content":"q\ud800"},{"role":"assistant","content":"a"}]}`)
	commitRecords(t, ws, "raw", `{"other":"\ud800"}`)
	for _, f := range []string{export.OpenAIJSONL, export.ShareGPT, export.ATIF} {
		out, sum, _ := run(t, ws, export.Options{Format: f})
		lines(t, out)
		for _, l := range strings.Split(out, "\n") {
			texts := []string{l}
			if f != export.ATIF {
				// Arguments and ShareGPT turns are JSON text in a string.
				texts = append(texts, strings.ReplaceAll(l, `\\`, `\`))
			}
			for _, text := range texts {
				if at, esc := jsontext.LoneSurrogate([]byte(text)); at >= 0 {
					t.Errorf("%s: %s written: %s", f, esc, l)
				}
			}
		}
		if f == export.ATIF {
			if !strings.Contains(out, `"record_text":"{\"other\":\"\\ud800\"}"`) {
				t.Errorf("atif: raw record not carried as text: %s", out)
			}
			continue
		}
		var skipped []string
		for _, n := range sum.Skipped {
			if strings.Contains(n.Example, "surrogate") {
				skipped = append(skipped, n.Names...)
			}
		}
		if len(skipped) != len(lone) {
			t.Errorf("%s: sessions skipped for their escapes: %v, want %d (%+v)", f, skipped, len(lone), sum.Skipped)
		}
	}
}

// TestDuplicateNamesNotExported: an object with a member name twice is
// valid JSON but not I-JSON; readers keep the first or the last. In a
// tool call's arguments the chat formats copied it, so one trainer
// would see x=1 and another x=2; such a record does not follow the
// convention, and the session is skipped, named. ATIF carries a raw
// record with one as text.
func TestDuplicateNamesNotExported(t *testing.T) {
	ws := emptyStore(t)
	commitRecords(t, ws, "args", `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"f","arguments":{"x":1,"x":2}}]},{"role":"tool","tool_call_id":"c1","content":"r"},{"role":"assistant","content":"done"}]}`)
	commitRecords(t, ws, "raw", `{"other":1,"other":2}`)
	for _, f := range []string{export.OpenAIJSONL, export.ShareGPT, export.ATIF} {
		out, sum, _ := run(t, ws, export.Options{Format: f})
		// (ATIF's record_text holds the raw record's text.)
		if strings.Contains(out, `"x":1,"x":2`) || f != export.ATIF && strings.Contains(out, `x\":1,\"x\":2`) {
			t.Errorf("%s: x twice written: %s", f, out)
		}
		if f == export.ATIF {
			if !strings.Contains(out, `"record_text":"{\"other\":1,\"other\":2}"`) {
				t.Errorf("atif: raw record not carried as text: %s", out)
			}
			continue
		}
		if noted(sum.Skipped, "wrong shape", "args") == nil {
			t.Errorf("%s: args not skipped: %+v", f, sum.Skipped)
		}
	}
}
