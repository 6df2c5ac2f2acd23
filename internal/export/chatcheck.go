package export

import (
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/cairnlog/cairn"
)

// chatCheck is the one set of checks of a trajectory's conversation for
// the chat formats (chatVerdict) and openai-jsonl (verdict): which of its
// messages a line keeps, or why it is skipped. It is fed the settled
// steps one at a time, oldest first, so that a trajectory held whole
// (checkHeld) and one too long to hold, read again a run at a time
// (openai_long.go), go through the same checks and get the same words.
type chatCheck struct {
	broken        bool // a step's record breaks the convention:
	brokenReason  string
	brokenExample string
	raw           bool
	// withoutCall says where the first tool result is that follows no
	// tool call: the message before it (past other results) is not an
	// assistant message calling tools. OpenAI's format wants each result
	// right after the message that made its call, and ShareGPT would
	// join such a result to the user's text.
	withoutCall string
	afterCalls  bool
	// mid says where the first tool call is that no tool result answers
	// before the conversation goes on (a user or assistant message
	// comes next): a hole. pending are the open message's calls not
	// answered yet; open and openAt where that message is, keep its
	// index in the concatenated messages, n the messages seen. A call
	// left unanswered by the conversation's last assistant message,
	// with nothing after it but results, was the model's last act (the
	// session ended, or was forked, before the tool answered): that
	// message and what follows are cut.
	mid     string
	pending []string
	open    *cairn.Step
	openAt  int
	n, keep int
	// forNoCall says where the first tool result is whose tool_call_id
	// no call of the assistant message before it has, or names a call
	// another result answered already. OpenAI's format refuses such a
	// result ("tool_call_id not found in tool_calls of previous
	// message"), and a second answer to one call leaves a reader pairing
	// by id two answers; ShareGPT and ATIF keep it.
	forNoCall string
	answered  callsAnswered
	// badCall says where the first tool call is whose function name
	// OpenAI's format refuses (openAIName), badCallAt its message's index;
	// tools are the newest tools listed (toolsOf), toolsAt their step.
	badCall        string
	badCallAt      int
	tools          []json.RawMessage
	toolsAt        *cairn.Step
	firstAssistant int  // the first assistant message's index (-1: none)
	fromState      bool // the path's conversation is read from its states
}

// newChatCheck returns a check of a trajectory's conversation, read from
// its states if fromState.
func newChatCheck(fromState bool) *chatCheck {
	return &chatCheck{keep: -1, firstAssistant: -1, fromState: fromState}
}

// clone returns a copy of c that goes on apart from it.
func (c *chatCheck) clone() *chatCheck {
	d := *c
	d.pending = slices.Clone(c.pending)
	d.tools = slices.Clone(c.tools)
	d.answered.ids = slices.Clone(c.answered.ids)
	return &d
}

// checkHeld returns the check of a trajectory held whole.
func checkHeld(t *Trajectory) *chatCheck {
	c := newChatCheck(t.fromState)
	for _, s := range t.Steps {
		c.add(s)
	}
	return c
}

func (c *chatCheck) say() string {
	return fmt.Sprintf("%s: messages[%d]: tool call %q", c.open, c.openAt, c.pending[0])
}

// add takes the next step s.
func (c *chatCheck) add(s Step) {
	if s.Broken != nil && !c.broken {
		c.broken = true
		c.brokenReason, _ = brokenReasons(s.Broken)
		c.brokenExample = fmt.Sprintf("%s: %v", s.Step, s.Broken)
	}
	if s.Rec == nil {
		if len(s.Record) > 0 {
			c.raw = true
		}
		return
	}
	if s.Rec.Tools != nil {
		c.tools, c.toolsAt = s.Rec.Tools, s.Step
	}
	for i, m := range s.Rec.Messages {
		// A result that follows no call.
		switch {
		case m.Role == "tool" && !c.afterCalls:
			if c.withoutCall == "" {
				c.withoutCall = fmt.Sprintf("%s: messages[%d]: %s", s.Step, i, resultID(m.ToolCallID))
			}
		case m.Role != "tool":
			c.afterCalls = len(m.ToolCalls) > 0
		}
		// A result for no call of the message before it.
		if !c.answered.add(m) && c.forNoCall == "" {
			c.forNoCall = fmt.Sprintf("%s: messages[%d]: %s", s.Step, i, resultID(m.ToolCallID))
		}
		// Calls no result answers, which end at one left unanswered
		// mid-way.
		c.n++
		if m.Role == "assistant" && c.firstAssistant < 0 {
			c.firstAssistant = c.n - 1
		}
		// A function name OpenAI's format refuses.
		for j := 0; j < len(m.ToolCalls) && c.badCall == ""; j++ {
			if name := m.ToolCalls[j].Name; !openAIName(name) {
				c.badCall = fmt.Sprintf("%s: messages[%d].tool_calls[%d]: %s", s.Step, i, j, nameProblem(name))
				c.badCallAt = c.n - 1
			}
		}
		if c.mid != "" {
			continue
		}
		if m.Role == "tool" {
			if j := slices.Index(c.pending, m.ToolCallID); j >= 0 {
				c.pending = slices.Delete(c.pending, j, j+1)
			}
			continue
		}
		if len(c.pending) > 0 {
			c.mid = c.say()
			continue
		}
		if len(m.ToolCalls) == 0 {
			continue
		}
		for _, tc := range m.ToolCalls {
			c.pending = append(c.pending, tc.ID)
		}
		c.keep, c.open, c.openAt = c.n-1, s.Step, i
	}
}

// verdict says, in v, whether the trajectory's openai-jsonl line is
// written, and how many of its messages (keep): chatVerdict's, and then
// what OpenAI's format alone refuses.
func (c *chatCheck) verdict(v *verdict) (keep int, ok bool) {
	if keep, ok = c.chatVerdict(v); !ok {
		return 0, false
	}
	if c.forNoCall != "" {
		v.skip = reasonResultForNoCall
		v.explain(reasonResultForNoCall, c.forNoCall)
		return 0, false
	}
	if c.firstAssistant < 0 || c.firstAssistant >= keep {
		// OpenAI's format trains on the assistant's messages, and
		// refuses an example without one.
		v.skip = reasonNoAssistantMessage
		if cut, ok := v.example[reasonUnansweredLast]; ok {
			v.explain(reasonNoAssistantMessage, "its only one, left out, calls a tool no result answers: "+cut)
		}
		return 0, false
	}
	if where := c.badName(keep); where != "" {
		v.skip = reasonToolName
		v.explain(reasonToolName, where)
		return 0, false
	}
	return keep, true
}

// badName says where the first function name is that OpenAI's format
// refuses among what an openai-jsonl line of the trajectory's first keep
// messages writes — the tools listed, and the calls of those messages —
// or "" if there is none.
func (c *chatCheck) badName(keep int) string {
	for i, raw := range c.tools {
		if name := toolName(raw); !openAIName(name) {
			return fmt.Sprintf("%s: tools[%d]: %s", c.toolsAt, i, nameProblem(name))
		}
	}
	return c.badCallBefore(keep)
}

// badCallBefore says where the first tool call is whose function name
// OpenAI's format refuses, if it is in one of the trajectory's first n
// messages; "" if there is none.
func (c *chatCheck) badCallBefore(n int) string {
	if c.badCall != "" && c.badCallAt < n {
		return c.badCall
	}
	return ""
}

// openAIName reports whether name is a function name OpenAI's chat and
// fine-tuning APIs take, in a tool definition and in a tool call: 1 to 64
// ASCII letters, digits, '_' or '-' (their pattern ^[a-zA-Z0-9_-]{1,64}$).
// They refuse a whole upload holding one other name.
func openAIName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// nameProblem says how name breaks openAIName's rule, showing a long
// name's first 64 characters only.
func nameProblem(name string) string {
	shown, count := name, ""
	if n := utf8.RuneCountInString(name); n > 64 {
		count = fmt.Sprintf(" (%d characters)", n)
		if len(name) > 100 {
			cut := 0
			for k := 0; k < 64; k++ {
				_, size := utf8.DecodeRuneInString(name[cut:])
				cut += size
			}
			shown = name[:cut] + "…"
		}
	}
	return fmt.Sprintf("function name %q%s is not 1 to 64 ASCII letters, digits, '_' or '-'", shown, count)
}

// toolName returns the function name of a tool definition, as the
// convention gives it ({"type":"function","function":{"name":…}}).
func toolName(raw json.RawMessage) string {
	var t struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	_ = json.Unmarshal(raw, &t)
	return t.Function.Name
}

// chatVerdict says, in v, how many of the trajectory's messages a chat
// format reads (keep), or that there are none to read (v.skip says
// why): a trajectory with a record that breaks the convention is skipped
// whole (its messages cannot be read, and a conversation with a hole
// would teach the wrong thing), as is one with a tool result that
// follows no tool call, one with a call left unanswered before the
// conversation goes on, and one without messages; a last assistant
// message whose calls no result answers is cut. Raw records beside
// conventional ones have no messages; v notes them.
func (c *chatCheck) chatVerdict(v *verdict) (keep int, ok bool) {
	if c.broken {
		v.skip = c.brokenReason
		v.explain(c.brokenReason, c.brokenExample)
		return 0, false
	}
	if c.withoutCall != "" {
		v.skip = reasonResultWithoutCall
		v.explain(reasonResultWithoutCall, c.withoutCall)
		return 0, false
	}
	keep = c.n
	switch {
	case c.mid != "":
		v.skip = reasonUnansweredCall
		v.explain(reasonUnansweredCall, c.mid)
		return 0, false
	case len(c.pending) > 0:
		keep = c.keep
		v.leave(reasonUnansweredLast)
		v.explain(reasonUnansweredLast, c.say())
	}
	switch {
	case keep == 0 && c.raw:
		v.skip = reasonRawOnly
	case keep == 0 && c.fromState:
		v.skip = reasonNoStateMessages
	case keep == 0:
		v.skip = reasonNoMessages
	case c.raw:
		v.leave(reasonRawLeftOut)
	}
	return keep, keep > 0
}

// resultID names a tool result's tool_call_id, as a note says it.
func resultID(id string) string {
	if id == "" {
		return "no tool_call_id"
	}
	return fmt.Sprintf("tool_call_id %q", id)
}

// callsAnswered follows, message by message, the calls of the last
// assistant message that made some, as its results answer them.
type callsAnswered struct {
	ids []string // its calls no result answers yet
}

// add takes the next message m, and reports false if m is a tool result
// that answers none of those calls: its id is none of theirs, or one a
// result before it answered.
func (c *callsAnswered) add(m cairn.Message) bool {
	switch {
	case m.Role == "tool":
		j := slices.Index(c.ids, m.ToolCallID)
		if j < 0 {
			return false
		}
		c.ids = slices.Delete(c.ids, j, j+1)
	case len(m.ToolCalls) > 0:
		c.ids = c.ids[:0]
		for _, tc := range m.ToolCalls {
			c.ids = append(c.ids, tc.ID)
		}
	}
	return true
}
