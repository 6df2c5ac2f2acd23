package export

import (
	"fmt"
	"regexp"
	"slices"
)

// openAIFunctionName is the pattern OpenAI's chat and fine-tuning APIs
// document for a function's name, in a tool definition and a tool call.
const openAIFunctionName = `^[a-zA-Z0-9_-]{1,64}$`

// OpenAIChatError applies the rules OpenAI's chat fine-tuning format
// sets on an example's messages, and returns how they break one, or nil:
// an example has at least one assistant message; an assistant message
// with tool_calls must be followed by tool messages responding to each
// tool_call_id, and a tool message must follow an assistant message with
// tool_calls (or another tool message), with the id of one of its calls;
// every call has an id, which is not empty, and a function name of
// openAIFunctionName.
func OpenAIChatError(messages []any) error {
	assistant := false
	var pending, made []string // the calls unanswered, and made, by the message before
	after := false             // the message before was a tool-calling one, or a result
	for i, x := range messages {
		m, ok := x.(map[string]any)
		if !ok {
			return fmt.Errorf("messages[%d] is not an object", i)
		}
		if m["role"] == "tool" {
			if !after {
				return fmt.Errorf("messages[%d]: a tool message that follows no tool call", i)
			}
			id, _ := m["tool_call_id"].(string)
			if id == "" {
				return fmt.Errorf("messages[%d]: a tool message without a tool_call_id", i)
			}
			if !slices.Contains(made, id) {
				return fmt.Errorf("messages[%d]: tool_call_id %q not found in the tool_calls of the message before", i, id)
			}
			for j, p := range pending {
				if p == id {
					pending = append(pending[:j], pending[j+1:]...)
					break
				}
			}
			continue
		}
		if len(pending) > 0 {
			return fmt.Errorf("messages[%d]: tool call %q before it has no tool message answering it", i, pending[0])
		}
		assistant = assistant || m["role"] == "assistant"
		calls, _ := m["tool_calls"].([]any)
		after = len(calls) > 0
		made = made[:0]
		for _, c := range calls {
			id, _ := c.(map[string]any)["id"].(string)
			if id == "" {
				return fmt.Errorf("messages[%d]: a tool call without an id", i)
			}
			fn, _ := c.(map[string]any)["function"].(map[string]any)
			name, _ := fn["name"].(string)
			if ok, _ := regexp.MatchString(openAIFunctionName, name); !ok {
				return fmt.Errorf("messages[%d]: a tool call of function %q, which OpenAI refuses", i, name)
			}
			if slices.Contains(made, id) {
				return fmt.Errorf("messages[%d]: two tool calls with id %q (a tool message's tool_call_id names one call)", i, id)
			}
			pending = append(pending, id)
			made = append(made, id)
		}
	}
	if len(pending) > 0 {
		return fmt.Errorf("tool call %q has no tool message answering it", pending[0])
	}
	if !assistant {
		return fmt.Errorf("no assistant message")
	}
	return nil
}

// OpenAIToolsError applies the rule OpenAI's format sets on an example's
// tool definitions, {"type":"function","function":{"name":…}}, and
// returns how one breaks it, or nil: a function's name is of
// openAIFunctionName.
func OpenAIToolsError(tools []any) error {
	for i, x := range tools {
		tool, _ := x.(map[string]any)
		fn, _ := tool["function"].(map[string]any)
		name, _ := fn["name"].(string)
		if ok, _ := regexp.MatchString(openAIFunctionName, name); !ok || tool["type"] != "function" {
			return fmt.Errorf("tools[%d]: function %q of type %v, which OpenAI refuses", i, name, tool["type"])
		}
	}
	return nil
}
