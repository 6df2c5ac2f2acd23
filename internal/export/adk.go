package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cairnlog/cairn"
)

// adkChat reads the conversation of a session written by cairn's ADK
// session service (adapters/adk): a step's record only says what the
// step did ({"adk":"create"}, {"adk":"event","event":ID},
// {"adk":"delete"}), and every step's state holds the session's events,
// each an ADK event as Go's encoding/json writes it, with its content in
// the genai form ({"role":"user"|"model","parts":[…]}).
type adkChat struct{}

// adkRecord is the record the service writes on every step.
type adkRecord struct {
	Op    string `json:"adk"`
	Event string `json:"event"`
}

func (adkChat) step(rec json.RawMessage) (reads, ok bool) {
	if len(rec) == 0 || !bytes.Contains(rec, []byte(`"adk"`)) {
		return false, false
	}
	var r adkRecord
	if json.Unmarshal(rec, &r) != nil {
		return false, false
	}
	switch r.Op {
	case "create", "delete":
		return false, true
	case "event":
		return r.Event != "", r.Event != ""
	}
	return false, false
}

func (adkChat) pointer() string { return "/events" }

func (adkChat) where(rec json.RawMessage) string {
	var r adkRecord
	_ = json.Unmarshal(rec, &r)
	return "event " + r.Event
}

// adkSessionState is the part of a session's state export reads.
type adkSessionState struct {
	Version int                `json:"adk_session"`
	Events  *[]json.RawMessage `json:"events"`
}

// elements returns the session's events as stored; ok is false if the
// state is not a session's (an app's or user's state).
func (adkChat) elements(state []byte) ([]json.RawMessage, bool, error) {
	var st adkSessionState
	if err := json.Unmarshal(state, &st); err != nil {
		return nil, false, fmt.Errorf("the state is not the ADK session service's: %v", err)
	}
	if st.Version == 0 || st.Events == nil {
		return nil, false, nil
	}
	return *st.Events, true, nil
}

// adkEvent is the part of a stored ADK event export reads.
type adkEvent struct {
	Content *struct {
		Role  string `json:"role"`
		Parts []struct {
			Text         string `json:"text"`
			Thought      bool   `json:"thought"`
			FunctionCall *struct {
				ID   string          `json:"id"`
				Name string          `json:"name"`
				Args json.RawMessage `json:"args"`
			} `json:"functionCall"`
			FunctionResponse *struct {
				ID       string          `json:"id"`
				Name     string          `json:"name"`
				Response json.RawMessage `json:"response"`
			} `json:"functionResponse"`
		} `json:"parts"`
	} `json:"Content"`
	UsageMetadata *struct {
		Prompt     int64 `json:"promptTokenCount"`
		Candidates int64 `json:"candidatesTokenCount"`
		Cached     int64 `json:"cachedContentTokenCount"`
	} `json:"UsageMetadata"`
	ModelVersion string `json:"ModelVersion"`
	Partial      bool   `json:"Partial"`
}

// convert returns an event's messages: a model turn is one assistant
// message (its text, its thoughts as reasoning, its function calls as
// tool calls); a user turn is a user message of its text and a tool
// message for each function response in it. An event without content
// (a state change, an agent transfer) has none.
func (adkChat) convert(elem json.RawMessage) ([]cairn.Message, string, *cairn.Tokens, error) {
	var ev adkEvent
	if err := json.Unmarshal(elem, &ev); err != nil {
		return nil, "", nil, fmt.Errorf("not an ADK event: %v", err)
	}
	if ev.Content == nil || ev.Partial || len(ev.Content.Parts) == 0 {
		return nil, "", nil, nil
	}
	var text, thought strings.Builder
	var msgs []cairn.Message
	var calls []cairn.ToolCall
	for _, p := range ev.Content.Parts {
		switch {
		case p.FunctionCall != nil:
			// As given: export settles absent arguments (settleArguments).
			calls = append(calls, cairn.ToolCall{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Arguments: p.FunctionCall.Args})
		case p.FunctionResponse != nil:
			msgs = append(msgs, cairn.Message{Role: "tool", ToolCallID: p.FunctionResponse.ID, Name: p.FunctionResponse.Name,
				Content: string(p.FunctionResponse.Response)})
		case p.Thought:
			thought.WriteString(p.Text)
		default:
			text.WriteString(p.Text)
		}
	}
	switch ev.Content.Role {
	case "model":
		if len(msgs) > 0 {
			return nil, "", nil, fmt.Errorf("a model turn holding function responses")
		}
		m := cairn.Message{Role: "assistant", Content: text.String(), Reasoning: thought.String(), ToolCalls: calls}
		var tokens *cairn.Tokens
		if u := ev.UsageMetadata; u != nil {
			tokens = &cairn.Tokens{Prompt: u.Prompt, Completion: u.Candidates, Cached: u.Cached}
		}
		return []cairn.Message{m}, ev.ModelVersion, tokens, nil
	case "user", "":
		if len(calls) > 0 {
			return nil, "", nil, fmt.Errorf("a user turn holding function calls")
		}
		if text.Len() > 0 || thought.Len() > 0 {
			msgs = append([]cairn.Message{{Role: "user", Content: text.String() + thought.String()}}, msgs...)
		}
		return msgs, "", nil, nil
	}
	return nil, "", nil, fmt.Errorf("a turn of role %q, neither user nor model", ev.Content.Role)
}
