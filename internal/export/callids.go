package export

import (
	"fmt"
	"slices"

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
	type call struct {
		tc       *cairn.ToolCall
		answered bool
	}
	type result struct {
		m     *cairn.Message
		where string
	}
	var open []*call     // the calls of the message the results follow
	var waiting []result // its results without an id, in order
	afterCalls := false  // the messages since are that message's results
	miss := func(where string) {
		if unpaired == "" {
			unpaired = where
		}
	}
	answer := func() {
		for _, r := range waiting {
			i := slices.IndexFunc(open, func(c *call) bool {
				return !c.answered && (r.m.Name == "" || r.m.Name == c.tc.Name)
			})
			if i < 0 {
				miss(r.where)
				continue
			}
			open[i].answered = true
			r.m.ToolCallID = open[i].tc.ID
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
				where := fmt.Sprintf("%s: messages[%d]: a tool result without a tool_call_id", s.Step, i)
				switch {
				case m.ToolCallID != "":
					if j := slices.IndexFunc(open, func(c *call) bool { return !c.answered && c.tc.ID == m.ToolCallID }); j >= 0 && afterCalls {
						open[j].answered = true
					}
				case afterCalls:
					waiting = append(waiting, result{m, where})
				default:
					miss(where)
				}
				continue
			}
			answer()
			open, afterCalls = open[:0], len(m.ToolCalls) > 0
			for j := range m.ToolCalls {
				n++
				tc := &m.ToolCalls[j]
				if tc.ID == "" {
					tc.ID = freshCallID(taken, s.Number, n)
				}
				open = append(open, &call{tc: tc})
			}
		}
	}
	answer()
	return unpaired
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
