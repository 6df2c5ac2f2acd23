package export

import (
	"encoding/json"
	"fmt"
)

// LlamaFactoryShareGPTError applies the rule LLaMA-Factory's
// SharegptDatasetConverter (src/llamafactory/data/converter.py) applies
// to a ShareGPT example's conversations, with its default tags, and
// returns why it would skip the example, or nil:
//
//   - a first turn from "system" is taken out as the system prompt;
//   - then turn i (from 0) must be from human or observation when i is
//     even, from gpt or function_call when i is odd;
//   - the number of those turns must be even (a conversation ends with
//     the assistant), and at least 2 (else there is nothing to learn);
//
// and, as its FunctionFormatter needs, every function_call value must be
// a JSON object {"name", "arguments"} or a list of them.
func LlamaFactoryShareGPTError(conversations []any) error {
	turns := conversations
	if len(turns) > 0 {
		if t, ok := turns[0].(map[string]any); ok && t["from"] == "system" {
			turns = turns[1:]
		}
	}
	odd := map[any]bool{"human": true, "observation": true}
	even := map[any]bool{"gpt": true, "function_call": true}
	for i, t := range turns {
		turn, ok := t.(map[string]any)
		if !ok {
			return fmt.Errorf("turn %d is not an object", i)
		}
		if _, ok := turn["value"].(string); !ok {
			return fmt.Errorf("turn %d: value is not a string", i)
		}
		if want := map[bool]map[any]bool{true: odd, false: even}[i%2 == 0]; !want[turn["from"]] {
			return fmt.Errorf("turn %d is from %v, against the alternation", i, turn["from"])
		}
		if turn["from"] == "function_call" {
			if err := checkFunctionCall(turn["value"].(string)); err != nil {
				return fmt.Errorf("turn %d: %w", i, err)
			}
		}
	}
	if len(turns)%2 != 0 || len(turns) == 0 {
		return fmt.Errorf("%d turns after the system turn: want an even number, at least 2", len(turns))
	}
	return nil
}

func checkFunctionCall(value string) error {
	var v any
	if err := json.Unmarshal([]byte(value), &v); err != nil {
		return fmt.Errorf("function_call value is not JSON: %w", err)
	}
	calls, ok := v.([]any)
	if !ok {
		calls = []any{v}
	}
	for _, c := range calls {
		call, ok := c.(map[string]any)
		if !ok {
			return fmt.Errorf("function_call value holds %T, not a call object", c)
		}
		if _, ok := call["name"].(string); !ok {
			return fmt.Errorf("function_call without a name")
		}
		if _, ok := call["arguments"]; !ok {
			return fmt.Errorf("function_call without arguments")
		}
	}
	return nil
}
