package export

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cairnlog/cairn"
)

// Sessions written by cairn's LangGraph.js checkpointer (clients/langgraph)
// keep their conversation in their state, not in their records: a step's
// record only says what the step is ({"langgraph":"checkpoint"} or
// {"langgraph":"writes"}, with the checkpoint's id), and a checkpoint
// step's state holds the thread's "messages" channel as LangGraph's
// serializer wrote it. Export reads the conversation from there, so that
// such a session exports as any session whose records follow
// docs/records.md: each checkpoint step is given the messages its
// checkpoint added to the channel, with the model and token counts of the
// assistant messages among them; a step of pending writes adds none (the
// next checkpoint holds what they wrote).

// langGraphRecord is the record the checkpointer writes on every step.
type langGraphRecord struct {
	Kind         string `json:"langgraph"`
	CheckpointID string `json:"checkpoint_id"`
}

// langGraphKind returns "checkpoint" or "writes" for a record the
// checkpointer wrote, else "".
func langGraphKind(rec json.RawMessage) string {
	if len(rec) == 0 || !bytes.Contains(rec, []byte(`"langgraph"`)) {
		return ""
	}
	var r langGraphRecord
	if json.Unmarshal(rec, &r) != nil || r.CheckpointID == "" {
		return ""
	}
	if r.Kind == "checkpoint" || r.Kind == "writes" {
		return r.Kind
	}
	return ""
}

// isLangGraph reports whether every step of t that has a record has one
// the checkpointer wrote, and there is at least one.
func isLangGraph(t *Trajectory) bool {
	found := false
	for _, s := range t.Steps {
		if len(s.Record) == 0 {
			continue
		}
		if langGraphKind(s.Record) == "" {
			return false
		}
		found = true
	}
	return found
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

// langGraphMessages returns the messages channel of a checkpoint step's
// state, each element as stored; ok is false if the state has none (a
// graph without a "messages" channel, or one LangGraph's serializer wrote
// as bytes).
func langGraphMessages(state []byte) (msgs []json.RawMessage, ok bool, err error) {
	var st langGraphState
	if err := json.Unmarshal(state, &st); err != nil {
		return nil, false, fmt.Errorf("the checkpoint's state is not the LangGraph checkpointer's: %v", err)
	}
	ch := st.Channels.Messages
	if ch == nil || len(ch.Value.JSON) == 0 || jsonKind(ch.Value.JSON) != "a list" {
		return nil, false, nil
	}
	if err := json.Unmarshal(ch.Value.JSON, &msgs); err != nil {
		return nil, false, fmt.Errorf("the checkpoint's messages channel: %v", err)
	}
	return msgs, true, nil
}

// langGraph gives the steps of t, a trajectory of LangGraph checkpoints,
// the records export reads: see the comment at the top of this file.
func (e *exporter) langGraph(ctx context.Context, t *Trajectory) error {
	var prev []json.RawMessage
	for i := range t.Steps {
		s := &t.Steps[i]
		if langGraphKind(s.Record) != "checkpoint" {
			s.Rec = &cairn.Record{}
			continue
		}
		// The state is read and dropped; what the trajectory keeps of it
		// is the messages it adds, accounted below.
		state, err := s.JSON(ctx)
		if err != nil {
			return fmt.Errorf("read the conversation of %s: %w", s.Step, err)
		}
		msgs, ok, err := langGraphMessages(state)
		if err != nil {
			s.Broken = &langGraphError{err}
			return nil
		}
		if !ok {
			s.Rec = &cairn.Record{}
			continue
		}
		if !samePrefix(prev, msgs) {
			s.Broken = &langGraphError{fmt.Errorf("checkpoint %s removed or changed messages of the conversation before it, so its steps are not one conversation", checkpointID(s.Record))}
			return nil
		}
		var added int64
		for _, raw := range msgs[len(prev):] {
			added += int64(len(raw))
		}
		if err := reserve(ctx, 2*added); err != nil {
			return err
		}
		rec := &cairn.Record{}
		for _, raw := range msgs[len(prev):] {
			m, model, tokens, err := langChainMessage(raw)
			if err != nil {
				s.Broken = &langGraphError{fmt.Errorf("checkpoint %s: message %d: %v", checkpointID(s.Record), len(rec.Messages)+len(prev)+1, err)}
				return nil
			}
			rec.Messages = append(rec.Messages, m)
			if model != "" {
				rec.Model = model
			}
			if tokens != nil {
				if rec.Tokens == nil {
					rec.Tokens = &cairn.Tokens{}
				}
				rec.Tokens.Prompt += tokens.Prompt
				rec.Tokens.Completion += tokens.Completion
				rec.Tokens.Cached += tokens.Cached
			}
		}
		s.Rec, s.Broken = rec, nil
		prev = msgs
	}
	return nil
}

// langGraphError is a Step.Broken of a LangGraph thread: its
// conversation cannot be read from its checkpoints.
type langGraphError struct{ err error }

func (e *langGraphError) Error() string { return e.err.Error() }
func (e *langGraphError) Unwrap() error { return e.err }

// checkpointID returns the checkpoint id of a checkpointer's record.
func checkpointID(rec json.RawMessage) string {
	var r langGraphRecord
	_ = json.Unmarshal(rec, &r)
	return r.CheckpointID
}

// samePrefix reports whether prev is a prefix of msgs, element by element
// as stored (a message is stored the same way every time the
// checkpointer writes it: it dedups unchanged elements).
func samePrefix(prev, msgs []json.RawMessage) bool {
	if len(prev) > len(msgs) {
		return false
	}
	for i := range prev {
		if !bytes.Equal(prev[i], msgs[i]) && !sameJSON(prev[i], msgs[i]) {
			return false
		}
	}
	return true
}

// sameJSON compares two JSON texts by value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ax, _ := json.Marshal(x)
	by, _ := json.Marshal(y)
	return bytes.Equal(ax, by)
}

// langChainSerialized is a message as LangChain's serializer writes it:
// {"lc":1,"type":"constructor","id":[…,"AIMessage"],"kwargs":{…}}.
type langChainSerialized struct {
	LC     int             `json:"lc"`
	Type   string          `json:"type"`
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
	if role == "assistant" {
		for _, c := range f.ToolCalls {
			args := c.Args
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			m.ToolCalls = append(m.ToolCalls, cairn.ToolCall{ID: c.ID, Name: c.Name, Arguments: args})
		}
	}
	if role == "tool" {
		m.ToolCallID, m.Name = f.ToolCallID, f.Name
	}
	var tokens *cairn.Tokens
	if role == "assistant" && f.Usage != nil {
		tokens = &cairn.Tokens{Prompt: f.Usage.Input, Completion: f.Usage.Output}
		if f.Usage.Details != nil {
			tokens.Cached = f.Usage.Details.CacheRead
		}
	}
	model := ""
	if role == "assistant" {
		model = f.ResponseMetadata.ModelName
		if model == "" {
			model = f.ResponseMetadata.Model
		}
	}
	return m, model, tokens, nil
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

// jsonKind names the kind of a JSON value in words.
func jsonKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "empty"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "true or false"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}
