package mcpserver

import (
	"container/list"
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/jsontext"
)

// IdleSessions is how many sessions the server keeps cached, with their
// heads (and the head's state, which makes the next checkpoint cheap),
// after the tool calls that used them: the most recently used ones.
const IdleSessions = 8

// recent forgets, in the workspace, the sessions that tool calls used
// longest ago beyond IdleSessions. The workspace caches every session a
// call names, with its head's state, for as long as the process lives:
// an agent that checkpoints to a new session now and then would grow
// `cairn mcp` by a state each time, for ever.
type recent struct {
	ws    *cairn.Workspace
	max   int
	mu    sync.Mutex
	order list.List // of session names, least recently used first
	elems map[string]*list.Element
}

func newRecent(ws *cairn.Workspace, max int) *recent {
	return &recent{ws: ws, max: max, elems: map[string]*list.Element{}}
}

// middleware notes the sessions each tool call names once it is done.
func (r *recent) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if call, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" && call.Params != nil {
			r.used(sessionsNamed(call.Params.Arguments))
		}
		return res, err
	}
}

// used marks names as the most recently used, and forgets the sessions
// beyond max.
func (r *recent) used(names []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range names {
		if e, ok := r.elems[n]; ok {
			r.order.MoveToBack(e)
		} else {
			r.elems[n] = r.order.PushBack(n)
		}
	}
	for r.order.Len() > r.max {
		n := r.order.Remove(r.order.Front()).(string)
		delete(r.elems, n)
		if s, err := r.ws.Session(n); err == nil {
			// A call still using it keeps working; the next one reads the
			// head from the store again.
			r.ws.Forget(s)
		}
	}
}

// sessionsNamed returns the valid session names a tool call's arguments
// name: session, to, and the sessions of the references ref, from, a, b.
func sessionsNamed(args json.RawMessage) []string {
	var names []string
	for _, m := range jsontext.Members(args) {
		switch m.Name {
		case "session", "to", "ref", "from", "a", "b":
		default:
			continue
		}
		var v string
		if json.Unmarshal(m.Value, &v) != nil {
			continue
		}
		name, _, _ := strings.Cut(v, "@")
		if cairn.ValidSession(name) == nil {
			names = append(names, name)
		}
	}
	return names
}
