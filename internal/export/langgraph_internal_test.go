package export

import (
	"encoding/json"
	"testing"
)

// The message forms a LangGraph messages channel holds: LangChain's
// serialized classes, and plain objects (a graph whose state is not
// MessagesAnnotation may keep {"role", "content"} or {"type", "content"}),
// with content as text or as a list of content blocks.
func TestLangChainMessageForms(t *testing.T) {
	for _, c := range []struct {
		in, role, text, err string
	}{
		{`{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{"content":"hi"}}`, "user", "hi", ""},
		{`{"lc":1,"type":"constructor","id":["langchain_core","messages","AIMessageChunk"],"kwargs":{"content":[{"type":"text","text":"a"},{"type":"image_url","image_url":"x"},{"type":"text","text":"b"}]}}`, "assistant", "ab", ""},
		{`{"role":"system","content":"rules"}`, "system", "rules", ""},
		{`{"type":"ai","content":null}`, "assistant", "", ""},
		{`{"type":"tool","content":"r","tool_call_id":"c"}`, "tool", "r", ""},
		{`{"lc":1,"type":"constructor","id":["langchain_core","messages","RemoveMessage"],"kwargs":{"id":"m1"}}`, "", "", `a message of kind "RemoveMessage", which has no chat role`},
		{`"just text"`, "", "", "not a message: a string"},
		{`{"role":"user","content":7}`, "", "", "content is a number, not text or a list of content blocks"},
	} {
		m, _, _, err := langChainMessage(json.RawMessage(c.in))
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || m.Role != c.role || m.Content != c.text {
			t.Errorf("%s: %+v, %v; want role %s text %q", c.in, m, err, c.role, c.text)
		}
	}
}

// The reader of a checkpoint's stored state never panics, whatever the
// bytes, and every message it accepts converts or is refused in words.
func FuzzLangGraphMessages(f *testing.F) {
	f.Add([]byte(`{"channels":{"messages":{"value":{"json":[{"lc":1,"type":"constructor","id":["x","AIMessage"],"kwargs":{"content":"","tool_calls":[{"id":"c","name":"n","args":{}}],"usage_metadata":{"input_tokens":1,"output_tokens":2}}}]}}}}`))
	f.Add([]byte(`{"channels":{"messages":{"value":{"json":{}}}}}`))
	f.Add([]byte(`{"channels":{"messages":{"value":{"type":"bytes","b64":""}}}}`))
	f.Fuzz(func(t *testing.T, state []byte) {
		msgs, ok, err := langGraphMessages(state)
		if err != nil || !ok {
			return
		}
		for _, raw := range msgs {
			_, _, _, _ = langChainMessage(raw)
		}
	})
}
