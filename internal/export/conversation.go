package export

import (
	"context"
	"encoding/json"

	"github.com/cairnlog/cairn"
)

// Conversation returns the trajectory of steps, a path of history
// oldest first (each step's parent the one before it) that a caller has
// already read, as export reads it: each step with the record export
// takes for it. For a session a framework adapter wrote (LangGraph,
// ADK), whose records only say what a step is, that record holds the
// messages the step added to the conversation the adapter keeps in its
// state (see fromstate.go), the first step's being the whole
// conversation so far; a step whose conversation cannot be read has
// Broken set. No step is read again, and nothing before the first.
func Conversation(ctx context.Context, ws *cairn.Workspace, steps []*cairn.Step) (*Trajectory, error) {
	if len(steps) == 0 {
		return &Trajectory{Labels: map[string]string{}}, nil
	}
	path := make([]Step, len(steps))
	for i, st := range steps {
		path[i] = stepOf(st)
	}
	return (&exporter{ws: ws}).trajectory(ctx, steps[len(steps)-1], path)
}

// AdapterRecord reports whether rec is the record of a framework adapter
// that keeps its sessions' conversation in their state, which
// Conversation reads.
func AdapterRecord(rec json.RawMessage) bool {
	for _, c := range stateChats {
		if _, ok := c.step(rec); ok {
			return true
		}
	}
	return false
}

// RulesOutAdapter reports whether a step with record rec shows that its
// session's conversation is not one a framework adapter keeps in its
// state: a record that is neither an adapter's nor one of the
// convention without messages (an outcome, a reward, labels), which
// Conversation reads the conversation beside.
func RulesOutAdapter(rec json.RawMessage) bool {
	if len(rec) == 0 || AdapterRecord(rec) {
		return false
	}
	r, err := cairn.ParseRecord(rec)
	return err != nil || len(r.Messages) > 0
}
