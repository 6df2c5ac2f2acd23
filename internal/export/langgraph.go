package export

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cairnlog/cairn"
)

// langGraphChat reads the conversation of a thread written by cairn's
// LangGraph.js checkpointer (clients/langgraph): a step's record only
// says what the step is ({"langgraph":"checkpoint"} or
// {"langgraph":"writes"}, with the checkpoint's id), and a checkpoint
// step's state holds the thread's "messages" channel as LangGraph's
// serializer wrote it. A step of pending writes adds no messages (the
// next checkpoint holds what they wrote).
type langGraphChat struct{}

// langGraphRecord is the record the checkpointer writes on every step.
type langGraphRecord struct {
	Kind         string `json:"langgraph"`
	CheckpointID string `json:"checkpoint_id"`
}

func (langGraphChat) step(rec json.RawMessage) (reads, ok bool) {
	if len(rec) == 0 || !bytes.Contains(rec, []byte(`"langgraph"`)) {
		return false, false
	}
	var r langGraphRecord
	if json.Unmarshal(rec, &r) != nil || r.CheckpointID == "" || (r.Kind != "checkpoint" && r.Kind != "writes") {
		return false, false
	}
	return r.Kind == "checkpoint", true
}

func (langGraphChat) pointer() string { return "/channels/messages/value/json" }

func (langGraphChat) where(rec json.RawMessage) string {
	var r langGraphRecord
	_ = json.Unmarshal(rec, &r)
	return "checkpoint " + r.CheckpointID
}

// langGraphState is the part of a checkpoint step's state export reads.
type langGraphState struct {
	Channels struct {
		Messages *struct {
			Value struct {
				JSON json.RawMessage `json:"json"`
			} `json:"value"`
		} `json:"messages"`
	} `json:"channels"`
}

// elements returns the messages channel of a checkpoint step's state,
// each message as stored; ok is false if the state has none (a graph
// without a "messages" channel, or one LangGraph's serializer wrote as
// bytes).
func (langGraphChat) elements(state []byte) (msgs []json.RawMessage, ok bool, err error) {
	var st langGraphState
	if err := json.Unmarshal(state, &st); err != nil {
		return nil, false, fmt.Errorf("the state is not the LangGraph checkpointer's: %v", err)
	}
	ch := st.Channels.Messages
	if ch == nil || len(ch.Value.JSON) == 0 || jsonKind(ch.Value.JSON) != "a list" {
		return nil, false, nil
	}
	if err := json.Unmarshal(ch.Value.JSON, &msgs); err != nil {
		return nil, false, fmt.Errorf("the messages channel: %v", err)
	}
	return msgs, true, nil
}

func (langGraphChat) convert(elem json.RawMessage) ([]cairn.Message, string, *cairn.Tokens, error) {
	m, model, tokens, err := langChainMessage(elem)
	if err != nil {
		return nil, "", nil, err
	}
	return []cairn.Message{m}, model, tokens, nil
}

// langChainSerialized is a message as LangChain's serializer writes it:
// {"lc":1,"type":"constructor","id":[…,"AIMessage"],"kwargs":{…}}.
type langChainSerialized struct {
	LC     int             `json:"lc"`
	ID     []string        `json:"id"`
	Kwargs json.RawMessage `json:"kwargs"`
}

// langChainFields are the fields of a message export reads, whether
// serialized (in kwargs) or a plain object.
type langChainFields struct {
	Role       string          `json:"role"`
	Type       string          `json:"type"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []langChainCall `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
	Usage      *struct {
		Input   int64 `json:"input_tokens"`
		Output  int64 `json:"output_tokens"`
		Details *struct {
			CacheRead int64 `json:"cache_read"`
		} `json:"input_token_details"`
	} `json:"usage_metadata"`
	ResponseMetadata struct {
		ModelName string `json:"model_name"`
		Model     string `json:"model"`
	} `json:"response_metadata"`
	AdditionalKwargs struct {
		ReasoningContent string `json:"reasoning_content"`
	} `json:"additional_kwargs"`
}

// langChainCall is one of an AI message's tool calls.
type langChainCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// langChainRoles maps LangChain's message classes and types to the
// convention's roles.
var langChainRoles = map[string]string{
	"HumanMessage": "user", "HumanMessageChunk": "user", "human": "user", "user": "user",
	"AIMessage": "assistant", "AIMessageChunk": "assistant", "ai": "assistant", "assistant": "assistant",
	"SystemMessage": "system", "SystemMessageChunk": "system", "system": "system",
	"ToolMessage": "tool", "ToolMessageChunk": "tool", "tool": "tool",
}

// langChainMessage converts one stored message of the channel to the
// convention's, with its model and token counts if it has them.
func langChainMessage(raw json.RawMessage) (cairn.Message, string, *cairn.Tokens, error) {
	var ser langChainSerialized
	if err := json.Unmarshal(raw, &ser); err != nil {
		return cairn.Message{}, "", nil, fmt.Errorf("not a message: %s", jsonKind(raw))
	}
	fieldsJSON, class := json.RawMessage(raw), ""
	if ser.LC != 0 && len(ser.ID) > 0 {
		fieldsJSON, class = ser.Kwargs, ser.ID[len(ser.ID)-1]
	}
	var f langChainFields
	if len(fieldsJSON) > 0 {
		if err := json.Unmarshal(fieldsJSON, &f); err != nil {
			return cairn.Message{}, "", nil, fmt.Errorf("a message whose fields do not have LangChain's shape: %v", err)
		}
	}
	role := langChainRoles[class]
	if role == "" {
		role = langChainRoles[f.Role]
	}
	if role == "" {
		role = langChainRoles[f.Type]
	}
	if role == "" {
		what := class
		if what == "" {
			what = f.Role + f.Type
		}
		return cairn.Message{}, "", nil, fmt.Errorf("a message of kind %q, which has no chat role", what)
	}
	text, err := langChainText(f.Content)
	if err != nil {
		return cairn.Message{}, "", nil, err
	}
	m := cairn.Message{Role: role, Content: text, Reasoning: f.AdditionalKwargs.ReasoningContent}
	switch role {
	case "tool":
		m.ToolCallID, m.Name = f.ToolCallID, f.Name
	case "assistant":
		for _, c := range f.ToolCalls {
			// As given: export settles absent arguments (settleArguments).
			m.ToolCalls = append(m.ToolCalls, cairn.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Args})
		}
		var tokens *cairn.Tokens
		if f.Usage != nil {
			tokens = &cairn.Tokens{Prompt: f.Usage.Input, Completion: f.Usage.Output}
			if f.Usage.Details != nil {
				tokens.Cached = f.Usage.Details.CacheRead
			}
		}
		return m, cmp.Or(f.ResponseMetadata.ModelName, f.ResponseMetadata.Model), tokens, nil
	}
	return m, "", nil, nil
}

// langChainText returns a message's content as text: a string as it is,
// a list of content blocks as the text of its text blocks.
func langChainText(content json.RawMessage) (string, error) {
	content = bytes.TrimSpace(content)
	if len(content) == 0 || string(content) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s, nil
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(content, &blocks); err != nil {
		return "", fmt.Errorf("content is %s, not text or a list of content blocks", jsonKind(content))
	}
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Type == "text" {
			b.WriteString(bl.Text)
		}
	}
	return b.String(), nil
}
