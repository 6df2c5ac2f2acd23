// Package mcpserver exposes a cairn workspace to agents as Model Context
// Protocol tools: checkpoint, resume, fork, show, log, diff and
// ask_for_approval, each with typed input and output schemas.
//
// States travel as JSON text (state_json) rather than as JSON values, so
// that key order and number text come back exactly as committed; records
// are plain JSON values.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/hitl"
	"github.com/cairnlog/cairn/internal/jsontext"
	"github.com/cairnlog/cairn/internal/termtext"
)

// Tool names.
const (
	ToolCheckpoint = "checkpoint"
	ToolResume     = "resume"
	ToolFork       = "fork"
	ToolShow       = "show"
	ToolLog        = "log"
	ToolDiff       = "diff"
	ToolAsk        = "ask_for_approval"
)

// New returns an MCP server whose tools act on ws.
func New(ws *cairn.Workspace, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "cairn", Title: "cairn step log", Version: version}, &mcp.ServerOptions{
		Instructions: "cairn keeps every step of an agent loop durable. Call checkpoint after each step with the whole state; " +
			"call resume at the start to continue from the last checkpoint; call ask_for_approval to pause for a human " +
			"(the session then waits with no process; resume shows the reply once a human answered).",
	})
	t := &tools{ws: ws}
	specs := map[string]argSpec{}
	// in records a tool's input schema for checkArgs and returns it.
	in := func(tool string, sch *jsonschema.Schema, types bool) *jsonschema.Schema {
		specs[tool] = argSpec{schema: sch, types: types}
		return sch
	}
	// checkpoint reads its arguments itself: the SDK would decode the
	// record into a map and re-sort its keys.
	s.AddTool(&mcp.Tool{Name: ToolCheckpoint, Description: "Commit the agent's whole state (state_json), or a JSON Patch of the last checkpoint's state (patch), as the next step of a session, with a record of what happened this step. " +
		"The result warns when the record does not follow the step-record convention (docs/records.md).",
		InputSchema: in(ToolCheckpoint, checkpointSchema(), false), OutputSchema: schemaFor[CheckpointOut](), Annotations: &mcp.ToolAnnotations{}}, t.checkpoint)
	addTool(s, &mcp.Tool{Name: ToolResume, Description: "Read a session's newest step (or step N): its state, record and status, to continue from it. Tells whether it awaits a human and carries a human's reply. " +
		"For a session with no steps it says new: true and carries no step.",
		InputSchema: in(ToolResume, schemaFor[ResumeIn](), true), OutputSchema: schemaFor[ResumeOut](), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, t.resume)
	addTool(s, &mcp.Tool{Name: ToolFork, Description: "Start a new session from a step of another (no data is copied); the new session continues from that step.",
		InputSchema: in(ToolFork, schemaFor[ForkIn](), true), OutputSchema: schemaFor[StepInfo](), Annotations: &mcp.ToolAnnotations{}}, t.fork)
	addTool(s, &mcp.Tool{Name: ToolShow, Description: "Show one step, SESSION or SESSION@N: its record and, unless record_only, its state. Below a fork's first step, SESSION@N is the step the fork shares with the session it was forked from, shown as that step (its own session and step).",
		InputSchema: in(ToolShow, schemaFor[ShowIn](), true), OutputSchema: schemaFor[StepState](), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, t.show)
	addTool(s, &mcp.Tool{Name: ToolLog, Description: "List a session's steps newest first, following parents across forks.",
		InputSchema: in(ToolLog, schemaFor[LogIn](), true), OutputSchema: schemaFor[LogOut](), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, t.log)
	addTool(s, &mcp.Tool{Name: ToolDiff, Description: "List the entries added, removed or changed from step a to step b (JSON pointers, or file paths).",
		InputSchema: in(ToolDiff, schemaFor[DiffIn](), true), OutputSchema: inferred[DiffOut](), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, t.diff)
	addTool(s, &mcp.Tool{Name: ToolAsk, Description: "Pause a session for a human: commit its current state again as a step awaiting input, with the question. A human answers with `cairn reply`, the HTTP API or its inbox; then resume returns the reply. " +
		"With an idempotency_key, a call repeated after its answer was lost returns the question it asked (replayed: true) instead of asking twice, and, if a human has answered it since, the answer (reply).",
		InputSchema: in(ToolAsk, askSchema(), true), OutputSchema: inferred[AskOut](), Annotations: &mcp.ToolAnnotations{}}, t.ask)
	s.AddReceivingMiddleware(checkArgs(specs), newRecent(ws, IdleSessions).middleware)
	return s
}

type tools struct{ ws *cairn.Workspace }

// addTool adds a tool as mcp.AddTool does, but decodes its arguments and
// encodes its result itself. The SDK takes both through map[string]any,
// which sorts a record's keys and rounds its numbers to float64
// (12345678901234567891 became 12345678901234567000): records, details
// and replies would not come back as they were sent. checkArgs has
// checked the arguments' names and types against the input schema.
func addTool[In, Out any](s *mcp.Server, t *mcp.Tool, h func(context.Context, *mcp.CallToolRequest, In) (*mcp.CallToolResult, Out, error)) {
	s.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in In
		if args := bytes.TrimSpace(req.Params.Arguments); len(args) > 0 && string(args) != "null" {
			if err := json.Unmarshal(args, &in); err != nil {
				return result(t.Name, nil, nil, fmt.Errorf("arguments: %v", err))
			}
		}
		res, out, err := h(ctx, req, in)
		return result(t.Name, res, out, err)
	})
}

// MaxAnswer bounds the line of one tool's answer, as MaxMessage bounds a
// request's (and as the SDK's clients bound what they read). An answer
// carries its JSON twice, as structured content and as text, so a state
// or a log's records may take up to half of it (maxPayload). Past it, a
// tool answers an error saying so, and builds nothing bigger in memory:
// one log of 1,000 steps of 200 KB records took cairn mcp to 3 GB to
// write a line of 400 MB that a client then refused.
const MaxAnswer = MaxMessage

// maxPayload bounds a state or a log's records in one answer.
const maxPayload = MaxAnswer / 2

// answerFrame is about what an answer's line holds beside its JSON and
// its text.
const answerFrame = 512

// errOverAnswer is the error of a write past maxPayload.
var errOverAnswer = errors.New("more than one answer carries")

// cappedBuffer is a buffer that refuses to grow past max bytes.
type cappedBuffer struct {
	bytes.Buffer
	max int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if c.Len()+len(p) > c.max {
		return 0, errOverAnswer
	}
	return c.Buffer.Write(p)
}

// result is a tool's answer: err as the tool's error (an answer, not a
// failure of the protocol), with what to do if the store's damage is its
// cause, else out encoded as the structured content of res (a new result
// if nil) and, unless res has content of its own, as its text.
func result(name string, res *mcp.CallToolResult, out any, err error) (*mcp.CallToolResult, error) {
	if err != nil {
		if hint := cairn.DamageHint(err); hint != "" {
			err = fmt.Errorf("%w (%s)", err, hint)
		}
		var res mcp.CallToolResult
		res.SetError(err)
		return &res, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode %s result: %w", name, err)
	}
	if text, _ := json.Marshal(string(b)); len(b)+len(text)+answerFrame > MaxAnswer {
		var res mcp.CallToolResult
		res.SetError(fmt.Errorf("%s: the answer would be %d bytes, more than the %d one answer carries: ask for less, or use the CLI or the HTTP API",
			name, len(b)+len(text)+answerFrame, MaxAnswer))
		return &res, nil
	}
	if res == nil {
		res = &mcp.CallToolResult{}
	}
	res.StructuredContent = json.RawMessage(b)
	if res.Content == nil {
		res.Content = []mcp.Content{&mcp.TextContent{Text: string(b)}}
	}
	return res, nil
}

// inferred is the output schema mcp.AddTool infers for Out.
func inferred[Out any]() *jsonschema.Schema {
	sch, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("schema of %T: %v", *new(Out), err))
	}
	return sch
}

// askSchema is AskIn's inferred schema with details any JSON value.
func askSchema() *jsonschema.Schema {
	sch := schemaFor[AskIn]()
	sch.Properties["details"] = &jsonschema.Schema{Description: "anything that helps the human decide (any JSON value)"}
	sch.Properties["idempotency_key"].Description = "names this question (" + cairn.IdempotencyKeyRule + ", e.g. a UUID): " +
		"call again with the same key when a call's answer was lost, and if its question landed the answer is that step " +
		"(replayed: true, with reply once a human has answered it), never a second question; the key on another step is a conflict"
	return sch
}

// checkpointSchema is CheckpointIn's inferred schema with the statuses
// spelled out and the record typed as an object.
func checkpointSchema() *jsonschema.Schema {
	sch := schemaFor[CheckpointIn]()
	sch.Properties["session"].Description = "session name: " + cairn.SessionNameRule
	sch.Properties["status"].Enum = []any{"running", "awaiting_input", "done"}
	sch.Properties["expect"].Minimum = new(float64)
	sch.Properties["record"] = &jsonschema.Schema{Type: "object", Description: recordDoc}
	sch.Properties["patch"] = &jsonschema.Schema{Types: []string{"array", "string"}, Description: patchDoc}
	sch.Properties["idempotency_key"].Description = "names this checkpoint (" + cairn.IdempotencyKeyRule + ", e.g. a UUID): " +
		"call again with the same key when a call's answer was lost, and if its step landed the answer is that step " +
		"(replayed: true), never a second one; the key on another step is a conflict"
	return sch
}

const patchDoc = "instead of state_json: an RFC 6902 JSON Patch applied to the last checkpoint's state, " +
	"e.g. [{\"op\":\"add\",\"path\":\"/messages/-\",\"value\":{...}}], or a string holding one; " +
	"cheaper than the whole state. A patch that fails commits nothing and its error names the operation (numbered from 1)."

const recordDoc = "what happened this step, a JSON object following the step-record convention (docs/records.md), " +
	"e.g. {\"messages\": [...], \"model\": \"...\"}; its keys are stored in the order given. " +
	"A JSON string holding such an object is accepted too."

// schemaFor is T's inferred schema, with the constraints every step
// description keeps: step numbers from 1, ids of 64 hex digits.
func schemaFor[T any]() *jsonschema.Schema {
	sch, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("schema of %T: %v", *new(T), err))
	}
	one := 1.0
	var fix func(*jsonschema.Schema)
	fix = func(sch *jsonschema.Schema) {
		if sch == nil {
			return
		}
		if p := sch.Properties["step"]; p != nil && p.Type == "integer" {
			p.Minimum = &one
		}
		if p := sch.Properties["id"]; p != nil && p.Type == "string" {
			p.Pattern = "^[0-9a-f]{64}$"
		}
		if p := sch.Properties["time"]; p != nil && p.Type == "string" {
			p.Format = "date-time"
			p.MinLength = new(int)
			*p.MinLength = 1
		}
		fix(sch.Items)
		for _, p := range sch.Properties {
			fix(p)
		}
	}
	fix(sch)
	return sch
}

// StepInfo describes a step.
type StepInfo struct {
	Session string `json:"session" jsonschema:"the session name"`
	Step    uint64 `json:"step" jsonschema:"the step number, from 1"`
	ID      string `json:"id" jsonschema:"BLAKE3 hash of the step manifest"`
	Parent  string `json:"parent,omitempty" jsonschema:"the parent step, SESSION@N; empty for a first step"`
	Origin  string `json:"origin,omitempty" jsonschema:"on the first step of a fork: the step it copies"`
	Status  string `json:"status" jsonschema:"running, awaiting_input or done"`
	Time    string `json:"time" jsonschema:"commit time, RFC 3339"`
	Record  any    `json:"record,omitempty" jsonschema:"the step record"`
}

func info(st *cairn.Step) StepInfo {
	in := StepInfo{Session: st.Session, Step: st.Number, ID: st.ID.String(), Status: st.Status.String(), Time: st.Time.Format(time.RFC3339Nano)}
	if st.Parent != nil {
		in.Parent = fmt.Sprintf("%s@%d", st.Parent.Session, st.Parent.Number)
	}
	if st.Origin != nil {
		in.Origin = fmt.Sprintf("%s@%d", st.Origin.Session, st.Origin.Number)
	}
	if len(st.Record) > 0 {
		in.Record = json.RawMessage(st.Record) // as stored, keys in their order
	}
	return in
}

// CheckpointIn is the input of checkpoint.
type CheckpointIn struct {
	Session   string          `json:"session" jsonschema:"session name"` // described in checkpointSchema
	StateJSON string          `json:"state_json,omitempty" jsonschema:"the whole agent state as JSON text; only what changed since the last step costs storage. Give this or patch"`
	Patch     json.RawMessage `json:"patch,omitempty"`
	Record    json.RawMessage `json:"record,omitempty"`
	Status    string          `json:"status,omitempty" jsonschema:"running (default), awaiting_input or done"`
	Expect    *uint64         `json:"expect,omitempty" jsonschema:"fail unless the session's head is this step (0: the session must be new); guards against a second writer"`
	// IdempotencyKey: described in checkpointSchema.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// CheckpointOut is the output of checkpoint.
type CheckpointOut struct {
	StepInfo
	Warning string `json:"warning,omitempty" jsonschema:"set when the record does not follow the step-record convention (docs/records.md): it was stored, and exports carry it as raw JSON"`
	// Replayed: an earlier call with the same idempotency key wrote the step.
	Replayed bool `json:"replayed,omitempty" jsonschema:"true when an earlier call with the same idempotency_key had written this step, and this one wrote nothing"`
}

// checkpoint decodes its arguments itself, so that the record keeps its
// keys in the order the agent sent them, as the CLI and HTTP API do.
func (t *tools) checkpoint(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	out, err := t.doCheckpoint(ctx, req.Params.Arguments)
	res, rerr := result(ToolCheckpoint, nil, out, err)
	if err == nil && rerr == nil && out.Warning != "" {
		res.Content = append(res.Content, &mcp.TextContent{Text: "warning: " + out.Warning})
	}
	return res, rerr
}

func (t *tools) doCheckpoint(ctx context.Context, raw json.RawMessage) (*CheckpointOut, error) {
	// encoding/json would read bytes that are not UTF-8, and a lone
	// surrogate escape, as U+FFFD: a state that is not the one sent.
	if err := unicodeText("arguments", raw); err != nil {
		return nil, err
	}
	var in CheckpointIn
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, argumentError(raw, err)
	}
	if in.Session == "" {
		return nil, errors.New("session is required: the session name")
	}
	s, err := t.ws.Session(in.Session)
	if err != nil {
		return nil, fmt.Errorf("session %s: want %s", termtext.Quote(in.Session), cairn.SessionNameRule)
	}
	patch, err := patchArg(in.Patch)
	if err != nil {
		return nil, err
	}
	var state cairn.State
	switch {
	case in.StateJSON != "" && patch != nil:
		return nil, errors.New("give state_json or patch, not both")
	case patch != nil:
		if err := unicodeText("patch", patch); err != nil {
			return nil, err
		}
		state = cairn.Patch(patch)
	case in.StateJSON == "":
		return nil, errors.New("state_json is required: the whole state as JSON text (or patch: a JSON Patch to apply to the last checkpoint's state)")
	case !json.Valid([]byte(in.StateJSON)):
		return nil, fmt.Errorf("state_json is not valid JSON text: %s", jsontext.Problem([]byte(in.StateJSON)))
	case unicodeText("state_json", []byte(in.StateJSON)) != nil:
		return nil, unicodeText("state_json", []byte(in.StateJSON))
	default:
		state = cairn.JSON([]byte(in.StateJSON))
	}
	opts := cairn.CommitOptions{}
	if in.Status != "" {
		if opts.Status, err = cairn.ParseStatus(in.Status); err != nil {
			return nil, fmt.Errorf("status %s: want running, awaiting_input or done", termtext.Quote(in.Status))
		}
	}
	rec, err := recordArg(in.Record)
	if err != nil {
		return nil, err
	}
	if err := unicodeText("record", rec); err != nil {
		return nil, err
	}
	opts.Record = rec
	if in.Expect != nil {
		opts.Expect = cairn.ExpectHead(*in.Expect)
	}
	if in.IdempotencyKey != "" {
		if cairn.ValidIdempotencyKey(in.IdempotencyKey) != nil {
			return nil, fmt.Errorf("idempotency_key %s: want %s", termtext.Quote(in.IdempotencyKey), cairn.IdempotencyKeyRule)
		}
		opts.IdempotencyKey = in.IdempotencyKey
	}
	st, err := s.Commit(ctx, state, opts)
	if err != nil {
		return nil, err
	}
	out := &CheckpointOut{StepInfo: info(st), Replayed: st.Replayed}
	if rec != nil {
		if _, err := cairn.ParseRecord(rec); err != nil && !errors.Is(err, cairn.ErrNotConventional) {
			out.Warning = fmt.Sprintf("the record does not follow the step-record convention (docs/records.md), so exports carry it as raw JSON: %v", err)
		}
	}
	return out, nil
}

// unicodeText refuses JSON text that is not Unicode text: bytes that
// are not UTF-8, or a \u escape of half a surrogate pair without its
// other half. name is the argument it is, or holds.
func unicodeText(name string, b []byte) error {
	if !utf8.Valid(b) {
		return fmt.Errorf("%s: not valid UTF-8 text (JSON must be UTF-8)", name)
	}
	if at, esc := jsontext.LoneSurrogate(b); at >= 0 {
		return fmt.Errorf("%s: the escape %s at byte %d is half of a UTF-16 surrogate pair without its other half: JSON strings must be Unicode text", name, esc, at)
	}
	return nil
}

// recordArg returns checkpoint's record: a JSON object as sent, or the
// object held by a JSON string (some clients send objects as text).
// Absent, null or "" is no record ("": as state_json and
// idempotency_key, what LLM clients send for a field they do not use).
func recordArg(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || string(raw) == `""` {
		return nil, nil
	}
	if raw[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, errors.New("record: want a JSON object")
		}
		raw = bytes.TrimSpace([]byte(text))
		if !json.Valid(raw) {
			return nil, errors.New("record: a string that is not JSON text; want a JSON object, or a string holding one")
		}
	}
	if raw[0] != '{' {
		return nil, errors.New("record: want a JSON object (see docs/records.md), or a string holding one")
	}
	return raw, nil
}

// patchArg returns checkpoint's patch: a JSON array as sent, or the
// array held by a JSON string. Absent, null or "" is no patch, as for
// recordArg.
func patchArg(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || string(raw) == `""` {
		return nil, nil
	}
	if raw[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, errors.New("patch: want a JSON array of operations")
		}
		raw = bytes.TrimSpace([]byte(text))
	}
	if len(raw) == 0 || raw[0] != '[' || !json.Valid(raw) {
		return nil, errors.New("patch: want a JSON array of operations, or a string holding one")
	}
	return raw, nil
}

// argumentError turns an error decoding checkpoint's arguments, raw,
// into one that names the argument, what it wants and the value given,
// as checkArgs says it for the other tools (encoding/json names only
// the value's type: "not bool").
func argumentError(raw json.RawMessage, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := map[string]string{
			"session": "a session name", "state_json": "the state as JSON text, a string",
			"status": "running, awaiting_input or done", "expect": "a step number, 0 or more",
			"idempotency_key": "a key of " + cairn.IdempotencyKeyRule + ", a string",
		}[te.Field]
		if want == "" {
			want = "another type"
		}
		v := strings.TrimPrefix(te.Value, "number ")
		tooLarge := false
		if _, err := strconv.ParseUint(v, 10, 64); err != nil && errors.Is(err, strconv.ErrRange) {
			tooLarge = true
		}
		for _, m := range jsontext.Members(raw) {
			if m.Name == te.Field {
				v = clip(m.Value)
				break
			}
		}
		if tooLarge {
			v += " (too large)"
		}
		return fmt.Errorf("%s: want %s, not %s", te.Field, want, v)
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("unknown argument %s (checkpoint takes session, state_json, patch, record, status, expect, idempotency_key)", name)
	}
	return errors.New("arguments: want a JSON object with session, state_json, patch, record, status, expect, idempotency_key")
}

// ResumeIn is the input of resume.
type ResumeIn struct {
	Session string `json:"session" jsonschema:"session name"`
	Step    uint64 `json:"step,omitempty" jsonschema:"a step number; default the newest step"`
}

// StepState is a step with its state.
type StepState struct {
	StepInfo
	Kind      string   `json:"kind" jsonschema:"json or dir"`
	StateJSON string   `json:"state_json,omitempty" jsonschema:"a JSON state, exactly as committed"`
	Files     []string `json:"files,omitempty" jsonschema:"a directory state's paths"`
	// FilesBytes gives the exact bytes of the paths of Files that are
	// not UTF-8.
	FilesBytes []FileBytes `json:"files_bytes,omitempty" jsonschema:"for each path of files that is not UTF-8 (shown there with U+FFFD): its index in files and its exact bytes"`
}

// FileBytes is the exact name of a file whose name is not UTF-8.
type FileBytes struct {
	Index     int    `json:"index" jsonschema:"the path's index in files, from 0"`
	PathBytes []byte `json:"path_bytes" jsonschema:"the name's exact bytes, base64"`
}

// ResumeOut is the output of resume. For a session with no steps only
// session, new, removed and awaiting_input are set.
type ResumeOut struct {
	Session       string      `json:"session" jsonschema:"the session name"`
	New           bool        `json:"new" jsonschema:"true if the session has no steps yet: start from scratch (then no step is described)"`
	Removed       bool        `json:"removed,omitempty" jsonschema:"true (with new) if the session was removed (cairn rm): its steps are gone, and a checkpoint starts a new session under its name"`
	Step          uint64      `json:"step,omitempty" jsonschema:"the step number, from 1"`
	ID            string      `json:"id,omitempty" jsonschema:"BLAKE3 hash of the step manifest"`
	Parent        string      `json:"parent,omitempty" jsonschema:"the parent step, SESSION@N; empty for a first step"`
	Origin        string      `json:"origin,omitempty" jsonschema:"on the first step of a fork: the step it copies"`
	Status        string      `json:"status,omitempty" jsonschema:"running, awaiting_input or done"`
	Time          string      `json:"time,omitempty" jsonschema:"commit time, RFC 3339"`
	Record        any         `json:"record,omitempty" jsonschema:"the step record"`
	Kind          string      `json:"kind,omitempty" jsonschema:"json or dir"`
	StateJSON     string      `json:"state_json,omitempty" jsonschema:"a JSON state, exactly as committed"`
	Files         []string    `json:"files,omitempty" jsonschema:"a directory state's paths"`
	FilesBytes    []FileBytes `json:"files_bytes,omitempty" jsonschema:"for each path of files that is not UTF-8 (shown there with U+FFFD): its index in files and its exact bytes"`
	AwaitingInput bool        `json:"awaiting_input" jsonschema:"true if the step waits for a human's answer"`
	Reply         any         `json:"reply,omitempty" jsonschema:"a human's answer, when this step is the reply to a question"`
}

func (t *tools) resume(ctx context.Context, _ *mcp.CallToolRequest, in ResumeIn) (*mcp.CallToolResult, ResumeOut, error) {
	if err := sessionArg("session", in.Session); err != nil {
		return nil, ResumeOut{}, err
	}
	s, err := t.ws.Session(in.Session)
	if err != nil {
		return nil, ResumeOut{}, err
	}
	var st *cairn.Step
	if in.Step > 0 {
		st, err = s.Step(ctx, in.Step)
	} else {
		st, err = s.Head(ctx)
		if errors.Is(err, cairn.ErrNotFound) {
			// No steps to go on from, whether the name never had any or
			// its session was removed; removed says which, as show and
			// log do, so that an agent does not take a removed history
			// for one that never was.
			return nil, ResumeOut{Session: in.Session, New: true, Removed: errors.Is(err, cairn.ErrRemoved)}, nil
		}
	}
	if err != nil {
		return nil, ResumeOut{}, err
	}
	ss, err := withState(ctx, st)
	if err != nil {
		return nil, ResumeOut{}, err
	}
	out := ResumeOut{
		Session: ss.Session, Step: ss.Step, ID: ss.ID, Parent: ss.Parent, Origin: ss.Origin, Status: ss.Status,
		Time: ss.Time, Record: ss.Record, Kind: ss.Kind, StateJSON: ss.StateJSON, Files: ss.Files, FilesBytes: ss.FilesBytes,
		AwaitingInput: st.Status == cairn.AwaitingInput,
	}
	if r, ok := hitl.ReplyInput(st.Record); ok {
		out.Reply = r
	}
	return nil, out, nil
}

// withState is st's description with its state (a JSON state's text, a
// directory state's paths), read no further than maxPayload bytes.
func withState(ctx context.Context, st *cairn.Step) (StepState, error) {
	out := StepState{StepInfo: info(st), Kind: st.Kind.String()}
	tooBig := fmt.Errorf("the state of %s is more than %d bytes, more than one answer carries: read it with `cairn show %s` or the HTTP API", st, maxPayload, st)
	if st.Kind == cairn.KindJSON {
		doc := cappedBuffer{max: maxPayload}
		if err := st.WriteJSON(ctx, &doc); errors.Is(err, errOverAnswer) {
			return out, tooBig
		} else if err != nil {
			return out, err
		}
		out.StateJSON = doc.String()
		return out, nil
	}
	files, err := st.Files(ctx)
	if err != nil {
		return out, err
	}
	n := 0
	for _, f := range files {
		if n += len(f.Path) + 4; n > maxPayload {
			return out, tooBig
		}
		if b := jsontext.NameBytes(f.Path); b != nil {
			if n += 2*len(b) + 32; n > maxPayload {
				return out, tooBig
			}
			out.FilesBytes = append(out.FilesBytes, FileBytes{len(out.Files), b})
		}
		out.Files = append(out.Files, f.Path)
	}
	return out, nil
}

// ForkIn is the input of fork.
type ForkIn struct {
	From string `json:"from" jsonschema:"the step to fork: SESSION (its newest step) or SESSION@N"`
	To   string `json:"to" jsonschema:"the new session's name; it must not exist"`
}

func (t *tools) fork(ctx context.Context, _ *mcp.CallToolRequest, in ForkIn) (*mcp.CallToolResult, StepInfo, error) {
	if err := sessionArg("to", in.To); err != nil {
		return nil, StepInfo{}, err
	}
	from, err := t.resolve(ctx, "from", in.From)
	if err != nil {
		return nil, StepInfo{}, err
	}
	st, err := t.ws.Fork(ctx, from, in.To)
	if err != nil {
		return nil, StepInfo{}, err
	}
	return nil, info(st), nil
}

// resolve reads the step that ref, the argument arg, names.
func (t *tools) resolve(ctx context.Context, arg, ref string) (*cairn.Step, error) {
	if err := refArg(arg, ref); err != nil {
		return nil, err
	}
	return t.ws.Resolve(ctx, ref)
}

// ShowIn is the input of show.
type ShowIn struct {
	Ref        string `json:"ref" jsonschema:"SESSION (its newest step) or SESSION@N"`
	RecordOnly bool   `json:"record_only,omitempty" jsonschema:"leave out the state"`
}

func (t *tools) show(ctx context.Context, _ *mcp.CallToolRequest, in ShowIn) (*mcp.CallToolResult, StepState, error) {
	st, err := t.resolve(ctx, "ref", in.Ref)
	if err != nil {
		return nil, StepState{}, err
	}
	if in.RecordOnly {
		return nil, StepState{StepInfo: info(st), Kind: st.Kind.String()}, nil
	}
	out, err := withState(ctx, st)
	return nil, out, err
}

// LogIn is the input of log.
type LogIn struct {
	Ref   string `json:"ref" jsonschema:"SESSION (from its newest step) or SESSION@N"`
	Limit *int   `json:"limit,omitempty" jsonschema:"at most this many steps: 1 to 10000 (default 50)"`
}

// Bounds of log's limit.
const (
	defaultLogLimit = 50
	maxLogLimit     = 10000
)

// stepInfoBytes is about what a StepInfo takes in an answer beside its
// record, for log's bound.
const stepInfoBytes = 256

// LogOut is the output of log.
type LogOut struct {
	Steps []StepInfo `json:"steps" jsonschema:"newest first"`
}

func (t *tools) log(ctx context.Context, _ *mcp.CallToolRequest, in LogIn) (*mcp.CallToolResult, LogOut, error) {
	limit := defaultLogLimit
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > maxLogLimit {
			return nil, LogOut{}, fmt.Errorf("limit %d: want 1 to %d (leave it out for %d)", *in.Limit, maxLogLimit, defaultLogLimit)
		}
		limit = *in.Limit
	}
	st, err := t.resolve(ctx, "ref", in.Ref)
	if err != nil {
		return nil, LogOut{}, err
	}
	out := LogOut{Steps: []StepInfo{}}
	enough := errors.New("enough")
	size := 0
	err = st.Log(ctx, func(s *cairn.Step) error {
		if len(out.Steps) == limit {
			return enough
		}
		if size += len(s.Record) + stepInfoBytes; size > maxPayload {
			return fmt.Errorf("the %d steps from %s hold more than %d bytes of records, more than one answer carries: ask for fewer (limit %d), or use `cairn log --json` or the HTTP API",
				len(out.Steps)+1, st, maxPayload, max(1, len(out.Steps)))
		}
		out.Steps = append(out.Steps, info(s))
		return nil
	})
	if err != nil && !errors.Is(err, enough) {
		return nil, LogOut{}, err
	}
	return nil, out, nil
}

// DiffIn is the input of diff.
type DiffIn struct {
	A string `json:"a" jsonschema:"the older step: SESSION or SESSION@N"`
	B string `json:"b" jsonschema:"the newer step: SESSION or SESSION@N"`
}

// Change is one difference between two states.
type Change struct {
	Path string `json:"path" jsonschema:"a JSON pointer or a file path"`
	// PathBytes is the exact bytes of a file name that is not UTF-8.
	PathBytes []byte `json:"path_bytes,omitempty" jsonschema:"only for a file name that is not UTF-8 (shown in path with U+FFFD): its exact bytes, base64"`
	Kind      string `json:"kind" jsonschema:"added, removed or changed"`
}

// DiffOut is the output of diff.
type DiffOut struct {
	Changes []Change `json:"changes"`
}

func (t *tools) diff(ctx context.Context, _ *mcp.CallToolRequest, in DiffIn) (*mcp.CallToolResult, DiffOut, error) {
	a, err := t.resolve(ctx, "a", in.A)
	if err != nil {
		return nil, DiffOut{}, err
	}
	b, err := t.resolve(ctx, "b", in.B)
	if err != nil {
		return nil, DiffOut{}, err
	}
	if a.Kind != b.Kind {
		// In the HTTP API's words: the Go API's error names the kinds
		// as stored ("a json state and a dir state").
		return nil, DiffOut{}, fmt.Errorf("a (%s) holds a %s state and b (%s) a %s state: diff compares two JSON states or two directory states",
			a, kindName(a.Kind), b, kindName(b.Kind))
	}
	cs, err := t.ws.Diff(ctx, a, b)
	if err != nil {
		return nil, DiffOut{}, err
	}
	out := DiffOut{Changes: make([]Change, 0, len(cs))}
	for _, c := range cs {
		out.Changes = append(out.Changes, Change{c.Path, jsontext.NameBytes(c.Path), string(c.Kind)})
	}
	return nil, out, nil
}

// kindName says the kind of a step's state in words.
func kindName(k cairn.Kind) string {
	if k == cairn.KindDir {
		return "directory"
	}
	return "JSON"
}

// AskIn is the input of ask_for_approval.
type AskIn struct {
	Session  string          `json:"session" jsonschema:"the session to pause; it must have a checkpoint"`
	Question string          `json:"question" jsonschema:"what the human is asked"`
	Details  json.RawMessage `json:"details,omitempty"` // described in askSchema; kept as sent
	// IdempotencyKey: described in askSchema.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// AskOut is the output of ask_for_approval.
type AskOut struct {
	StepInfo
	Next string `json:"next" jsonschema:"what happens now"`
	// Replayed: an earlier call with the same idempotency key asked.
	Replayed bool `json:"replayed,omitempty" jsonschema:"true when an earlier call with the same idempotency_key had asked this question, and this one wrote nothing"`
	// ReplyStep and Reply: a human answered the question an earlier call
	// asked.
	ReplyStep uint64 `json:"reply_step,omitempty" jsonschema:"when replayed and a human has answered the question since: the step of the reply"`
	Reply     any    `json:"reply,omitempty" jsonschema:"when replayed and a human has answered the question since: the human's answer"`
}

func (t *tools) ask(ctx context.Context, _ *mcp.CallToolRequest, in AskIn) (*mcp.CallToolResult, AskOut, error) {
	if err := sessionArg("session", in.Session); err != nil {
		return nil, AskOut{}, err
	}
	s, err := t.ws.Session(in.Session)
	if err != nil {
		return nil, AskOut{}, err
	}
	if strings.TrimSpace(in.Question) == "" {
		return nil, AskOut{}, errors.New("question is empty")
	}
	var details json.RawMessage
	if d := bytes.TrimSpace(in.Details); len(d) > 0 && string(d) != "null" {
		details = d
	}
	if in.IdempotencyKey != "" && cairn.ValidIdempotencyKey(in.IdempotencyKey) != nil {
		return nil, AskOut{}, fmt.Errorf("idempotency_key %s: want %s", termtext.Quote(in.IdempotencyKey), cairn.IdempotencyKeyRule)
	}
	st, err := hitl.AskWith(ctx, s, in.Question, details, hitl.AskOptions{IdempotencyKey: in.IdempotencyKey})
	if err != nil {
		return nil, AskOut{}, err
	}
	out := AskOut{StepInfo: info(st), Replayed: st.Replayed, Next: fmt.Sprintf(
		"%s now awaits a human (cairn inbox lists it; cairn reply %s --input JSON answers). Stop here; resume %s later returns the reply.",
		st, st.Session, st.Session)}
	if !st.Replayed {
		return nil, out, nil
	}
	// A retry: the question may have been answered since the call that
	// asked it.
	r, err := hitl.Answer(ctx, s, st)
	if err != nil {
		return nil, AskOut{}, err
	}
	if r == nil {
		out.Next = fmt.Sprintf("%s, asked by an earlier call with this idempotency_key, still awaits a human (cairn inbox lists it; cairn reply %s --input JSON answers). Stop here; resume %s later returns the reply.",
			st, st.Session, st.Session)
		return nil, out, nil
	}
	input, _ := hitl.ReplyInput(r.Record)
	out.ReplyStep, out.Reply = r.Number, input
	out.Next = fmt.Sprintf("a human answered %s, asked by an earlier call with this idempotency_key, at %s: the answer is reply. Go on from resume %s.",
		st, r, st.Session)
	return nil, out, nil
}
