package cairn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cairnlog/cairn/internal/jsontext"
	"github.com/cairnlog/cairn/manifest"
)

// Record is the step-record convention (docs/records.md): what happened
// in one step, as the JSON value passed in CommitOptions.Record or
// `cairn commit --record`. Every field is optional. Records that do not
// follow it are still stored and exported, as raw JSON.
type Record struct {
	// Messages are the chat messages added this step, in order (not the
	// whole conversation: a trajectory's conversation is the
	// concatenation of its steps' messages).
	Messages []Message `json:"messages,omitempty"`
	// Tools are the tool (function) definitions offered to the model, in
	// OpenAI's {"type":"function","function":{...}} form. The newest
	// step that lists tools defines them for the trajectory: nil lists
	// none, an empty non-nil list says no tools from this step on.
	Tools []json.RawMessage `json:"tools,omitzero"`
	// Agent names the agent system that ran the step.
	Agent *Agent `json:"agent,omitempty"`
	// Model is the LLM used this step.
	Model string `json:"model,omitempty"`
	// Tokens counts the tokens of this step's model calls.
	Tokens *Tokens `json:"tokens,omitempty"`
	// CostUSD is the money spent on this step's model calls.
	CostUSD *float64 `json:"cost_usd,omitempty"`
	// LatencyMS is how long the step took, in milliseconds.
	LatencyMS *float64 `json:"latency_ms,omitempty"`
	// Labels are free-form key/value tags; a trajectory's labels are its
	// steps' labels merged, newer steps winning.
	Labels map[string]string `json:"labels,omitempty"`
	// Outcome judges the trajectory up to this step: "success" or
	// "failure" (the preference export pairs sibling forks by it).
	Outcome string `json:"outcome,omitempty"`
	// Reward is a numeric judgement; when both siblings carry one it
	// orders them instead of Outcome.
	Reward *float64 `json:"reward,omitempty"`
}

// Message is one chat message.
type Message struct {
	// Role is "system", "user", "assistant" or "tool".
	Role string `json:"role"`
	// Content is the message text (may be empty for an assistant
	// message that only calls tools).
	Content string `json:"content"`
	// Reasoning is the model's visible reasoning, if any. A record may
	// give it as reasoning_content instead, as OpenAI-compatible
	// reasoning APIs return it; reasoning wins if both are given.
	Reasoning string `json:"reasoning,omitempty"`
	// ToolCalls are the tools an assistant message calls.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID ties a "tool" message (a tool's result) to its call.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name optionally names the tool of a "tool" message.
	Name string `json:"name,omitempty"`
}

// UnmarshalJSON decodes a message, reading reasoning_content as
// Reasoning when reasoning is absent.
func (m *Message) UnmarshalJSON(b []byte) error {
	if m == nil {
		return invalid(errors.New("decode message: nothing to decode into (a nil *Message)"))
	}
	type plain Message // without this method
	var v struct {
		plain
		ReasoningContent string `json:"reasoning_content"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*m = Message(v.plain)
	if m.Reasoning == "" {
		m.Reasoning = v.ReasoningContent
	}
	return nil
}

// ToolCall is one tool invocation by the model. A record may give its
// name and arguments nested under "function", as OpenAI's API returns a
// call ({"id","type":"function","function":{"name","arguments"}}).
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is a JSON object, or a JSON string holding the
	// arguments as text (OpenAI's form, usually a JSON object's text;
	// any text is kept as given). Absent or null means none.
	Arguments json.RawMessage `json:"arguments"`
}

// UnmarshalJSON decodes a tool call, reading the name and arguments
// nested under "function" (OpenAI's form) where they are not given at
// the call's top level.
func (tc *ToolCall) UnmarshalJSON(b []byte) error {
	if tc == nil {
		return invalid(errors.New("decode tool call: nothing to decode into (a nil *ToolCall)"))
	}
	type plain ToolCall // without this method
	var v struct {
		plain
		Function *struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*tc = ToolCall(v.plain)
	if f := v.Function; f != nil {
		if tc.Name == "" {
			tc.Name = f.Name
		}
		if len(tc.Arguments) == 0 {
			tc.Arguments = f.Arguments
		}
	}
	return nil
}

// Tokens counts the tokens of a step's model calls. Prompt includes
// Cached.
type Tokens struct {
	Prompt     int64 `json:"prompt"`
	Completion int64 `json:"completion"`
	Cached     int64 `json:"cached,omitempty"`
}

// Agent names an agent system.
type Agent struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// MaxRecordBytes bounds a step record (CommitOptions.Record): 8 MiB.
const MaxRecordBytes = manifest.MaxRecordSize

// ErrNotConventional reports a step record that does not even try to
// follow the convention: it is not a JSON object, or has none of the
// convention's keys. Other ParseRecord errors are records that use the
// convention's keys with the wrong shape.
var ErrNotConventional = errors.New("not a conventional step record")

// Roles a Message may have.
var messageRoles = map[string]bool{"system": true, "user": true, "assistant": true, "tool": true}

// recordKeys are the top-level keys of the convention.
var recordKeys = []string{"messages", "tools", "agent", "model", "tokens", "cost_usd", "latency_ms", "labels", "outcome", "reward"}

// ParseRecord decodes raw as a Record. It fails when raw does not follow
// the convention: it is not a JSON object or has none of the
// convention's keys (errors wrapping ErrNotConventional), or one of them
// has the wrong shape.
// Keys outside the convention are allowed and ignored; a key that is
// one of the convention's in other letters ("Role") is a wrong shape,
// not read as that key (encoding/json would match it ignoring case).
func ParseRecord(raw []byte) (rec *Record, err error) {
	raw = bytes.TrimSpace(raw)
	if rec, ok := parseRecordFast(raw); ok {
		return rec, nil
	}
	return parseRecord(raw)
}

// parseRecord is ParseRecord of raw, trimmed, the plain way: a map of
// the record's keys, then the record, each message and each tool call
// through its own UnmarshalJSON, so a record's text is checked and read
// several times over.
func parseRecord(raw []byte) (rec *Record, err error) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object", ErrNotConventional)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotConventional, err)
	}
	known := false
	for _, k := range recordKeys {
		if _, ok := keys[k]; ok {
			known = true
			break
		}
	}
	if !known {
		return nil, fmt.Errorf("%w: none of the convention's keys (%v)", ErrNotConventional, recordKeys)
	}
	rec = new(Record)
	if err := json.Unmarshal(raw, rec); err != nil {
		return nil, shapeError(raw, err)
	}
	if err := rec.Validate(); err != nil {
		return nil, err
	}
	// Read as the convention's, a key in other letters would be taken
	// for the convention's own (encoding/json ignores case).
	if msg := recordShape.folded(raw); msg != "" {
		return nil, errors.New("step record: " + msg)
	}
	return rec, nil
}

// parseRecordFast is parseRecord of a record that follows the
// convention, read in one pass: the top-level keys are scanned (no map),
// and the messages and tool calls are decoded by the one Unmarshal
// (wireRecord), as their UnmarshalJSON methods decode them. ok is false
// for anything else (no convention key, a text that is not JSON, a
// value of the wrong kind, a record Validate refuses): parseRecord then
// says why, in its words.
func parseRecordFast(raw []byte) (rec *Record, ok bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	if known, scanned := hasRecordKey(raw); !known || !scanned {
		return nil, false
	}
	var w wireRecord
	if json.Unmarshal(raw, &w) != nil {
		return nil, false
	}
	rec = w.record()
	if rec.Validate() != nil || recordShape.folded(raw) != "" {
		return nil, false
	}
	return rec, true
}

// wireRecord decodes as Record does, its messages and their tool calls
// as Message.UnmarshalJSON and ToolCall.UnmarshalJSON do, without a
// json.Unmarshal of its own for each.
type wireRecord struct {
	Messages  []wireMessage     `json:"messages,omitempty"`
	Tools     []json.RawMessage `json:"tools,omitzero"`
	Agent     *Agent            `json:"agent,omitempty"`
	Model     string            `json:"model,omitempty"`
	Tokens    *Tokens           `json:"tokens,omitempty"`
	CostUSD   *float64          `json:"cost_usd,omitempty"`
	LatencyMS *float64          `json:"latency_ms,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
	Outcome   string            `json:"outcome,omitempty"`
	Reward    *float64          `json:"reward,omitempty"`
}

type wireMessage struct {
	Role             string         `json:"role"`
	Content          string         `json:"content"`
	Reasoning        string         `json:"reasoning,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
	Name             string         `json:"name,omitempty"`
	ReasoningContent string         `json:"reasoning_content"`
}

type wireToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Function  *struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

func (w *wireRecord) record() *Record {
	r := &Record{Tools: w.Tools, Agent: w.Agent, Model: w.Model, Tokens: w.Tokens, CostUSD: w.CostUSD,
		LatencyMS: w.LatencyMS, Labels: w.Labels, Outcome: w.Outcome, Reward: w.Reward}
	if w.Messages != nil {
		r.Messages = make([]Message, len(w.Messages))
	}
	for i, wm := range w.Messages {
		m := Message{Role: wm.Role, Content: wm.Content, Reasoning: wm.Reasoning, ToolCallID: wm.ToolCallID, Name: wm.Name}
		if m.Reasoning == "" {
			m.Reasoning = wm.ReasoningContent
		}
		if wm.ToolCalls != nil {
			m.ToolCalls = make([]ToolCall, len(wm.ToolCalls))
		}
		for j, wc := range wm.ToolCalls {
			tc := ToolCall{ID: wc.ID, Name: wc.Name, Arguments: wc.Arguments}
			if f := wc.Function; f != nil {
				if tc.Name == "" {
					tc.Name = f.Name
				}
				if len(tc.Arguments) == 0 {
					tc.Arguments = f.Arguments
				}
			}
			m.ToolCalls[j] = tc
		}
		r.Messages[i] = m
	}
	return r
}

// hasRecordKey reports whether the JSON object text raw has one of the
// convention's keys at its top level, as parseRecord's map of its keys
// would: scanned is false if raw could not be read as an object.
func hasRecordKey(raw []byte) (known, scanned bool) {
	i := skipSpace(raw, 1)
	if i < len(raw) && raw[i] == '}' {
		return false, true
	}
	for i < len(raw) {
		if raw[i] != '"' {
			return false, false
		}
		end, escaped := stringEnd(raw, i)
		if end < 0 {
			return false, false
		}
		key := raw[i+1 : end]
		if escaped {
			var k string
			if json.Unmarshal(raw[i:end+1], &k) != nil {
				return false, false
			}
			key = []byte(k)
		}
		if slices.Contains(recordKeys, string(key)) {
			return true, true
		}
		i = skipSpace(raw, end+1)
		if i >= len(raw) || raw[i] != ':' {
			return false, false
		}
		if i = valueEnd(raw, skipSpace(raw, i+1)); i < 0 {
			return false, false
		}
		i = skipSpace(raw, i)
		switch {
		case i < len(raw) && raw[i] == ',':
			i = skipSpace(raw, i+1)
		case i < len(raw) && raw[i] == '}':
			return false, true
		default:
			return false, false
		}
	}
	return false, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index of the quote that ends the JSON string
// starting at b[i], or -1, and whether the string holds an escape. A
// quote ends it unless an odd run of backslashes stands before it.
func stringEnd(b []byte, i int) (end int, escaped bool) {
	for j := i + 1; j < len(b); {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1, escaped
		}
		q := j + k
		if !escaped && bytes.IndexByte(b[j:q], '\\') >= 0 {
			escaped = true
		}
		run := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			run++
		}
		if run%2 == 0 {
			return q, escaped
		}
		j = q + 1
	}
	return -1, escaped
}

// valueEnd returns the index just past the JSON value starting at b[i],
// or -1: strings and nesting are followed, not checked (json.Unmarshal
// checks the text after).
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end, _ := stringEnd(b, i)
		if end < 0 {
			return -1
		}
		return end + 1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _ := stringEnd(b, j)
				if end < 0 {
					return -1
				}
				j = end
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && !strings.ContainsRune(",}] \t\n\r", rune(b[j])) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// Validate reports the first way r breaks the convention, as an error
// matching ErrInvalid (as does a nil r).
func (r *Record) Validate() error {
	if r == nil {
		return invalid(errors.New("step record: no record given (nil)"))
	}
	if err := r.validate(); err != nil {
		return invalid(err)
	}
	return nil
}

// validate is Validate of a record that is not nil.
func (r *Record) validate() error {
	for i, m := range r.Messages {
		if !messageRoles[m.Role] {
			return fmt.Errorf("step record: messages[%d]: role %q is not system, user, assistant or tool", i, m.Role)
		}
		if len(m.ToolCalls) > 0 && m.Role != "assistant" {
			return fmt.Errorf("step record: messages[%d]: only assistant messages call tools", i)
		}
		for j, tc := range m.ToolCalls {
			if tc.Name == "" {
				return fmt.Errorf("step record: messages[%d].tool_calls[%d]: no name", i, j)
			}
			if a := bytes.TrimSpace(tc.Arguments); len(a) > 0 && a[0] != '{' && a[0] != '"' && string(a) != "null" {
				return fmt.Errorf("step record: messages[%d].tool_calls[%d]: arguments is not a JSON object or a string", i, j)
			}
			// The exports copy these as given: what a trainer's
			// reader refuses or misreads must not be in them.
			if err := jsontext.IJSON(tc.Arguments); err != nil {
				return fmt.Errorf("step record: messages[%d].tool_calls[%d]: arguments %w", i, j, err)
			}
		}
	}
	for i, raw := range r.Tools {
		if err := validTool(raw); err != nil {
			return fmt.Errorf("step record: tools[%d]: %w", i, err)
		}
		if err := jsontext.IJSON(raw); err != nil {
			return fmt.Errorf("step record: tools[%d] %w", i, err)
		}
	}
	if r.Agent != nil && r.Agent.Name == "" {
		return fmt.Errorf("step record: agent has no name")
	}
	return nil
}

// validTool reports how raw, one of a record's tool definitions, is not
// in OpenAI's form, {"type":"function","function":{"name":…}} with the
// function's parameters, if any, a JSON Schema object: the form every
// chat export writes the tools in, and its readers (OpenAI's fine-tuning
// format, LLaMA-Factory's tool formatter) take.
func validTool(raw json.RawMessage) error {
	var t struct {
		Type     *string `json:"type"`
		Function *struct {
			Name       *string         `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	const want = `want {"type":"function","function":{"name":…, "parameters":{…}}}`
	if b := bytes.TrimSpace(raw); len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &t) != nil {
		return errors.New("not a tool definition object: " + want)
	}
	switch {
	case t.Type == nil || *t.Type != "function":
		return errors.New(`type is not "function": ` + want)
	case t.Function == nil || t.Function.Name == nil || *t.Function.Name == "":
		return errors.New("the function has no name: " + want)
	}
	if p := bytes.TrimSpace(t.Function.Parameters); len(p) > 0 && p[0] != '{' && string(p) != "null" {
		return errors.New("the function's parameters are not a JSON Schema object: " + want)
	}
	return nil
}

// MarshalRecord returns r as JSON for CommitOptions.Record. It fails as
// r.Validate does (a nil r is ErrInvalid).
func MarshalRecord(r *Record) (json.RawMessage, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(r)
}

// A shape is what one value of the convention must be, for saying in
// the convention's words (not Go's) where a record goes wrong.
type shape struct {
	want   string            // "a string", "an array of messages", …
	kind   byte              // the JSON kind: 's'tring, 'f'loat, 'i'nteger, 'o'bject, 'a'rray, or 0 for any
	fields map[string]*shape // an object's keys (kind 'o' with fields)
	elem   *shape            // an array's elements, or a map's values (kind 'o' without fields)
}

var (
	shapeString  = &shape{want: "a string", kind: 's'}
	shapeNumber  = &shape{want: "a number", kind: 'f'}
	shapeInteger = &shape{want: "a whole number", kind: 'i'}
	shapeAny     = &shape{}
	recordShape  = &shape{kind: 'o', fields: map[string]*shape{
		"messages": {want: "an array of messages", kind: 'a', elem: &shape{want: "a message object", kind: 'o', fields: map[string]*shape{
			"role": shapeString, "content": shapeString, "reasoning": shapeString, "reasoning_content": shapeString,
			"tool_calls": {want: "an array of tool calls", kind: 'a', elem: &shape{want: "a tool call object", kind: 'o', fields: map[string]*shape{
				"id": shapeString, "name": shapeString, "arguments": shapeAny,
				"function": {want: "an object", kind: 'o', fields: map[string]*shape{"name": shapeString, "arguments": shapeAny}},
			}}},
			"tool_call_id": shapeString, "name": shapeString,
		}}},
		// A tool's members are checked by validTool; its shape here
		// (of no kind) names the keys it reads, for folded.
		"tools": {want: "an array", kind: 'a', elem: &shape{fields: map[string]*shape{
			"type": shapeAny, "function": {fields: map[string]*shape{"name": shapeAny, "parameters": shapeAny}},
		}}},
		"agent":      {want: "an object", kind: 'o', fields: map[string]*shape{"name": shapeString, "version": shapeString}},
		"model":      shapeString,
		"tokens":     {want: "an object", kind: 'o', fields: map[string]*shape{"prompt": shapeInteger, "completion": shapeInteger, "cached": shapeInteger}},
		"cost_usd":   shapeNumber,
		"latency_ms": shapeNumber,
		"labels":     {want: "an object of strings", kind: 'o', elem: shapeString},
		"outcome":    shapeString,
		"reward":     shapeNumber,
	}}
)

// folded says where raw, JSON text of this shape, has a key that is
// none of the shape's fields but one of them in other letters ("Role",
// "messAges", "tYpe"), or "". encoding/json matches keys ignoring case,
// so the record would read as if the key were the field's, while the
// exports copy the parts they take raw (tools) with the key as given,
// which their readers do not take. It reads raw once per level of the
// shape. raw must be valid JSON (the record decoded).
func (s *shape) folded(raw []byte) string {
	f := s.foldedAt(raw)
	if f == nil {
		return ""
	}
	at := ""
	for i := len(f.path) - 1; i >= 0; i-- {
		at += f.path[i]
	}
	if at = strings.TrimPrefix(at, "."); at != "" {
		at += ": "
	}
	return fmt.Sprintf("%skey %q is the convention's %q in other letters: its keys are matched exactly", at, f.key, f.field)
}

// foldedKey is a key folded found: the path to its object, innermost
// part first (".messages", "[0]"), the key and the field it folds to.
type foldedKey struct {
	path       []string
	key, field string
}

// descends reports whether s has keys of its own below it to check.
func (s *shape) descends() bool { return s.fields != nil || s.kind == 'a' && s.elem != nil }

// foldedAt is folded's walk of raw, valid JSON: objects through
// jsontext.Members, which gives member names as written.
func (s *shape) foldedAt(raw []byte) *foldedKey {
	switch {
	case s.fields != nil:
		for _, m := range jsontext.Members(raw) {
			sub, ok := s.fields[m.Name]
			if !ok {
				for f := range s.fields {
					if strings.EqualFold(f, m.Name) {
						return &foldedKey{key: m.Name, field: f}
					}
				}
				continue
			}
			if !sub.descends() {
				continue
			}
			if found := sub.foldedAt(m.Value); found != nil {
				found.path = append(found.path, "."+m.Name)
				return found
			}
		}
	case s.kind == 'a' && s.elem != nil:
		for i, e := range jsontext.Elements(raw) {
			if found := s.elem.foldedAt(e); found != nil {
				found.path = append(found.path, fmt.Sprintf("[%d]", i))
				return found
			}
		}
	}
	return nil
}

// shapeError explains why raw, a JSON object, did not decode as a Record
// (err, in Go's words): the path of the first value of the wrong kind,
// what it wants and what it got.
func shapeError(raw []byte, err error) error {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if d.Decode(&v) == nil {
		if msg := recordShape.check(v, ""); msg != "" {
			return errors.New("step record: " + msg)
		}
	}
	// The walk saw the value encoding/json did not take (a key given
	// twice, the first of the wrong kind): its words, without Go's.
	if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) {
		return fmt.Errorf("step record: %s: %s of the wrong kind", te.Field, te.Value)
	}
	return fmt.Errorf("step record: %w", err)
}

// check returns what is wrong with v at path, or "". A null is no value,
// as encoding/json takes it, and fits every shape.
func (s *shape) check(v any, path string) string {
	if v == nil || s.kind == 0 {
		return ""
	}
	got := ""
	switch v := v.(type) {
	case string:
		if s.kind == 's' {
			return ""
		}
		got = "a string"
	case bool:
		got = "a boolean"
	case json.Number:
		switch s.kind {
		case 'f':
			if _, err := strconv.ParseFloat(string(v), 64); err != nil {
				return fmt.Sprintf("%s: %s is out of range", path, v)
			}
			return ""
		case 'i':
			if _, err := strconv.ParseInt(string(v), 10, 64); err == nil {
				return ""
			} else if errors.Is(err, strconv.ErrRange) {
				return fmt.Sprintf("%s: %s is out of range", path, v)
			}
			f, err := strconv.ParseFloat(string(v), 64)
			switch {
			case err != nil || f == math.Trunc(f) && math.Abs(f) >= 1<<63:
				return fmt.Sprintf("%s: %s is out of range", path, v)
			case f == math.Trunc(f):
				return fmt.Sprintf("%s: want %s in plain digits, got %s", path, s.want, v)
			}
			return fmt.Sprintf("%s: want %s, got %s", path, s.want, v)
		}
		got = "a number"
	case []any:
		if s.kind == 'a' {
			for i, e := range v {
				if msg := s.elem.check(e, fmt.Sprintf("%s[%d]", path, i)); msg != "" {
					return msg
				}
			}
			return ""
		}
		got = "an array"
	case map[string]any:
		if s.kind == 'o' {
			return s.checkObject(v, path)
		}
		got = "an object"
	}
	return fmt.Sprintf("%s: want %s, got %s", path, s.want, got)
}

// checkObject checks the members of an object (fields matched as
// encoding/json matches them: exactly, else ignoring case) or of a map.
func (s *shape) checkObject(v map[string]any, path string) string {
	for _, k := range slices.Sorted(maps.Keys(v)) {
		e := v[k]
		var sub *shape
		name := ""
		if s.fields == nil {
			sub, name = s.elem, fmt.Sprintf("%s[%q]", path, k)
		} else {
			for f, fs := range s.fields {
				if f == k || sub == nil && strings.EqualFold(f, k) {
					sub, name = fs, f
				}
			}
			if sub != nil && path != "" {
				name = path + "." + name
			}
		}
		if sub == nil {
			continue // a key outside the convention
		}
		if msg := sub.check(e, name); msg != "" {
			return msg
		}
	}
	return ""
}
