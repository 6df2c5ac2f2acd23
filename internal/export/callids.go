package export

import (
	"fmt"
	"strconv"
	"strings"

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
//
// An agent may give two calls one id: twice in one assistant message,
// or again while an earlier call of that id is still unanswered. A
// result naming the id would then answer either, and OpenAI's format
// wants each tool_call_id to name exactly one call; so the first keeps
// the id, and a later one gets <id>#2, <id>#3, … (the first of these the
// trajectory does not use; Step.renamed keeps the agent's id). A result
// naming the id answers the first call of it not yet answered among the
// calls of the assistant message its run of tool messages follows (as
// they come in their calls' order), and is given that call's id.
func settleCallIDs(t *Trajectory) (unpaired string) {
	taken := map[string]bool{}
	for _, s := range t.Steps {
		takeCallIDs(taken, s)
	}
	c := &callSettler{taken: taken}
	for i := range t.Steps {
		c.step(&t.Steps[i])
	}
	c.answer()
	return c.unpaired
}

// takeCallIDs adds the tool call ids s's messages use to taken.
func takeCallIDs(taken map[string]bool, s Step) {
	if s.Rec == nil {
		return
	}
	for _, m := range s.Rec.Messages {
		for _, tc := range m.ToolCalls {
			taken[tc.ID] = true
		}
		taken[m.ToolCallID] = true
	}
}

// callSettler is settleCallIDs over a trajectory's steps fed to it one
// at a time, oldest first: a result without an id gets it once the run of
// tool messages it is in ends (waiting is then empty), as results with an
// id later in the run claim their calls first.
type callSettler struct {
	// taken holds every id the trajectory's messages use, or at least
	// those freshCallID could make (see mayBeFresh).
	taken      map[string]bool
	open       calls           // the calls of the message the results follow
	waiting    []waitingResult // its results without an id, in order
	afterCalls bool            // the messages since are that message's results
	unpaired   string
	// pending holds the ids of the calls no result answers yet.
	pending map[string]bool
}

type waitingResult struct {
	m    *cairn.Message
	step *cairn.Step
	i    int // its index in the step's messages
}

func (c *callSettler) miss(r waitingResult) {
	if c.unpaired == "" {
		c.unpaired = fmt.Sprintf("%s: messages[%d]: a tool result without a tool_call_id", r.step, r.i)
	}
}

// answer gives the waiting results the ids of the calls they answer.
func (c *callSettler) answer() {
	for _, r := range c.waiting {
		q := &c.open.all
		if r.m.Name != "" {
			q = c.open.byName[r.m.Name]
		}
		tc := c.open.next(q)
		if tc == nil {
			c.miss(r)
			continue
		}
		r.m.ToolCallID = tc.ID
		delete(c.pending, tc.ID)
	}
	c.waiting = c.waiting[:0]
}

// step settles the ids of s's messages (those of its results without
// an id possibly only once later steps are fed: see callSettler).
func (c *callSettler) step(s *Step) {
	if s.Rec == nil {
		return
	}
	if c.pending == nil {
		c.pending = map[string]bool{}
	}
	n := 0 // calls of the step
	msgs := s.Rec.Messages
	for i := range msgs {
		m := &msgs[i]
		if m.Role == "tool" {
			switch {
			case m.ToolCallID != "":
				if !c.afterCalls {
					break
				}
				if tc := c.open.next(c.open.byID[m.ToolCallID]); tc != nil {
					m.ToolCallID = tc.ID
					delete(c.pending, tc.ID)
				}
			case c.afterCalls:
				c.waiting = append(c.waiting, waitingResult{m, s.Step, i})
			default:
				c.miss(waitingResult{m, s.Step, i})
			}
			continue
		}
		c.answer()
		c.afterCalls = len(m.ToolCalls) > 0
		given := make([]string, len(m.ToolCalls)) // the ids results name
		for j := range m.ToolCalls {
			n++
			tc := &m.ToolCalls[j]
			switch given[j] = tc.ID; {
			case tc.ID == "":
				tc.ID = freshCallID(c.taken, s.Number, n)
			case c.pending[tc.ID]:
				id := renamedCallID(c.taken, tc.ID)
				if s.renamed == nil {
					s.renamed = map[string]string{}
				}
				s.renamed[id], tc.ID = tc.ID, id
			}
			c.pending[tc.ID] = true
		}
		c.open.reset(m.ToolCalls, given)
	}
}

// mayBeFresh reports whether id has the shape of an id freshCallID or
// renamedCallID makes (call_<step>_<n>, <id>#<k>): only such ids can be
// taken when they look, so a pass that must not hold every id of a long
// trajectory keeps these.
func mayBeFresh(id string) bool {
	if strings.Contains(id, "#") {
		return true
	}
	rest, ok := strings.CutPrefix(id, "call_")
	if !ok || rest == "" {
		return false
	}
	for _, r := range rest {
		if (r < '0' || r > '9') && r != '_' && r != '#' {
			return false
		}
	}
	return true
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

// reset makes tc the calls results answer, results naming a call's id
// as given (given[i] for tc[i], before a renaming).
func (c *calls) reset(tc []cairn.ToolCall, given []string) {
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
		add(c.byID, given[i], i)
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

// renamedCallID returns the first of id#2, id#3, … that taken lacks, and
// takes it.
func renamedCallID(taken map[string]bool, id string) string {
	for k := 2; ; k++ {
		if out := id + "#" + strconv.Itoa(k); !taken[out] {
			taken[out] = true
			return out
		}
	}
}
