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

// The ADK event forms: a model turn with text, a thought and a function
// call; a user turn of function responses; an event without content.
func TestADKEventForms(t *testing.T) {
	msgs, model, tokens, err := adkChat{}.convert(json.RawMessage(`{"Content":{"role":"model","parts":[{"text":"hm","thought":true},{"text":"let me look"},{"functionCall":{"id":"f1","name":"read","args":{"p":1}}}]},"UsageMetadata":{"promptTokenCount":9,"candidatesTokenCount":2},"ModelVersion":"g"}`))
	if err != nil || len(msgs) != 1 || model != "g" || tokens == nil || tokens.Prompt != 9 || tokens.Completion != 2 {
		t.Fatalf("model turn: %+v %q %+v %v", msgs, model, tokens, err)
	}
	if m := msgs[0]; m.Role != "assistant" || m.Content != "let me look" || m.Reasoning != "hm" || len(m.ToolCalls) != 1 || string(m.ToolCalls[0].Arguments) != `{"p":1}` {
		t.Errorf("model turn: %+v", m)
	}
	msgs, _, _, err = adkChat{}.convert(json.RawMessage(`{"Content":{"role":"user","parts":[{"functionResponse":{"id":"f1","name":"read","response":{"text":"hi"}}},{"functionResponse":{"id":"f2","name":"ls","response":{}}}]}}`))
	if err != nil || len(msgs) != 2 || msgs[0].Role != "tool" || msgs[0].ToolCallID != "f1" || msgs[0].Content != `{"text":"hi"}` || msgs[1].ToolCallID != "f2" {
		t.Errorf("function responses: %+v %v", msgs, err)
	}
	if msgs, _, _, err = (adkChat{}).convert(json.RawMessage(`{"Content":null,"Actions":{"StateDelta":{"k":1}}}`)); err != nil || len(msgs) != 0 {
		t.Errorf("an event without content: %+v %v", msgs, err)
	}
	if _, _, _, err = (adkChat{}).convert(json.RawMessage(`{"Content":{"role":"robot","parts":[{"text":"x"}]}}`)); err == nil || err.Error() != `a turn of role "robot", neither user nor model` {
		t.Errorf("an unknown role: %v", err)
	}
}

// The readers of an adapter's stored state never panic, whatever the
// bytes, and every element they accept converts or is refused in words.
func FuzzStateChat(f *testing.F) {
	f.Add([]byte(`{"channels":{"messages":{"value":{"json":[{"lc":1,"type":"constructor","id":["x","AIMessage"],"kwargs":{"content":"","tool_calls":[{"id":"c","name":"n","args":{}}],"usage_metadata":{"input_tokens":1,"output_tokens":2}}}]}}}}`))
	f.Add([]byte(`{"channels":{"messages":{"value":{"json":{}}}}}`))
	f.Add([]byte(`{"adk_session":1,"events":[{"Content":{"role":"model","parts":[{"functionCall":{"id":"f","name":"n","args":null}}]}}]}`))
	f.Fuzz(func(t *testing.T, state []byte) {
		for _, c := range stateChats {
			elems, ok, err := c.elements(state)
			if err != nil || !ok {
				continue
			}
			for _, el := range elems {
				_, _, _, _ = c.convert(el)
			}
		}
	})
}
