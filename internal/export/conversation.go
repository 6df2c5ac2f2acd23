package export

import (
	"context"
	"encoding/json"

	"github.com/cairnlog/cairn"
)

// Conversation reads the history of head, oldest first, as export reads
// it: each step with the record export takes for it. For a session a
// framework adapter wrote (LangGraph, ADK), whose records only say what
// a step is, that record holds the messages the step added to the
// conversation the adapter keeps in its state (see fromstate.go); a step
// whose conversation cannot be read has Broken set.
func Conversation(ctx context.Context, ws *cairn.Workspace, head *cairn.Step) (*Trajectory, error) {
	return (&exporter{ws: ws}).load(ctx, head)
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
