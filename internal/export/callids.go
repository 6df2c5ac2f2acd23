package export

import (
	"fmt"

	"github.com/cairnlog/cairn"
)

// Many agents do not number their tool calls: a call without an id, a
// result without a tool_call_id. Every format pairs a result with its
// call by id, and OpenAI's refuses an empty one, so settleCallIDs, the
// one place that decides what such calls and results are called, gives
// them ids once per trajectory, whatever source its conversation was
// read from; each format then writes the ids as an agent that numbers
// its calls would have them.

// settleCallIDs gives every tool call of t without an id one of its
// own, call_<step>_<n>: the number of its step and its place among the
// step's calls, 1 first (with #2, #3, … after it should the agent use
// that id itself somewhere on the path). A tool result without a
// tool_call_id gets the id of the call it answers, among the calls of
// the assistant message its run of tool messages follows: the first of
// them no result answers yet (results come in their calls' order) and,
// if the result names its tool, of that name. Results with an id claim
// their calls first. A result without an id left with no call to answer
// (it follows no call, or every call it may answer is answered) keeps
// its empty id: unpaired says where the first one is ("" if none).
func settleCallIDs(t *Trajectory) (unpaired string) {
	taken := map[string]bool{}
	for _, s := range t.Steps {
		if s.Rec == nil {
			continue
		}
		for _, m := range s.Rec.Messages {
			for _, tc := range m.ToolCalls {
				taken[tc.ID] = true
			}
			taken[m.ToolCallID] = true
		}
	}
	type result struct {
		m    *cairn.Message
		step *cairn.Step
		i    int // its index in the step's messages
	}
	var open calls       // the calls of the message the results follow
	var waiting []result // its results without an id, in order
	afterCalls := false  // the messages since are that message's results
	miss := func(r result) {
		if unpaired == "" {
			unpaired = fmt.Sprintf("%s: messages[%d]: a tool result without a tool_call_id", r.step, r.i)
		}
	}
	answer := func() {
		for _, r := range waiting {
			q := &open.all
			if r.m.Name != "" {
				q = open.byName[r.m.Name]
			}
			c := open.next(q)
			if c == nil {
				miss(r)
				continue
			}
			r.m.ToolCallID = c.ID
		}
		waiting = waiting[:0]
	}
	for _, s := range t.Steps {
		if s.Rec == nil {
			continue
		}
		n := 0 // calls of the step
		msgs := s.Rec.Messages
		for i := range msgs {
			m := &msgs[i]
			if m.Role == "tool" {
				switch {
				case m.ToolCallID != "":
					if afterCalls {
						open.next(open.byID[m.ToolCallID])
					}
				case afterCalls:
					waiting = append(waiting, result{m, s.Step, i})
				default:
					miss(result{m, s.Step, i})
				}
				continue
			}
			answer()
			afterCalls = len(m.ToolCalls) > 0
			for j := range m.ToolCalls {
				n++
				if tc := &m.ToolCalls[j]; tc.ID == "" {
					tc.ID = freshCallID(taken, s.Number, n)
				}
			}
			open.reset(m.ToolCalls)
		}
	}
	answer()
	return unpaired
}

// calls are the tool calls of one assistant message, as results answer
// them: each queue holds the indexes of calls, in order, and is popped as
// they are answered, so a message of many calls and results costs what
// they hold, not their product.
type calls struct {
	tc       []cairn.ToolCall
	answered []bool
	all      []int             // every call
	byID     map[string]*[]int // the calls of an id
	byName   map[string]*[]int // the calls of a tool's name
}

// reset makes tc the calls results answer.
func (c *calls) reset(tc []cairn.ToolCall) {
	if len(tc) == 0 {
		*c = calls{}
		return
	}
	c.tc, c.answered, c.all = tc, make([]bool, len(tc)), make([]int, len(tc))
	c.byID, c.byName = map[string]*[]int{}, map[string]*[]int{}
	add := func(m map[string]*[]int, k string, i int) {
		q := m[k]
		if q == nil {
			q = new([]int)
			m[k] = q
		}
		*q = append(*q, i)
	}
	for i, t := range tc {
		c.all[i] = i
		add(c.byID, t.ID, i)
		add(c.byName, t.Name, i)
	}
}

// next marks answered the first call of q not answered yet and returns
// it; nil if there is none (or no queue).
func (c *calls) next(q *[]int) *cairn.ToolCall {
	if q == nil {
		return nil
	}
	for len(*q) > 0 && c.answered[(*q)[0]] {
		*q = (*q)[1:]
	}
	if len(*q) == 0 {
		return nil
	}
	i := (*q)[0]
	*q, c.answered[i] = (*q)[1:], true
	return &c.tc[i]
}

// freshCallID returns call_<step>_<n>, or the first of call_<step>_<n>#2,
// #3, … that taken lacks, and takes it.
func freshCallID(taken map[string]bool, step uint64, n int) string {
	base := fmt.Sprintf("call_%d_%d", step, n)
	id := base
	for k := 2; taken[id]; k++ {
		id = fmt.Sprintf("%s#%d", base, k)
	}
	taken[id] = true
	return id
}
