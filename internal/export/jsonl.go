package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/jsontext"
)

// jsonlWriter writes one JSON value per trajectory and line.
type jsonlWriter struct {
	out io.Writer
	bw  *bufio.Writer
	// line returns t's line (nil: nothing to write, v.skip says why),
	// with a metadata object if meta.
	line func(t *Trajectory, v *verdict, meta bool) any
	meta bool
	// long writes a trajectory too long to hold (long.go), for the
	// formats that stream one (longFormat).
	long func(w *jsonlWriter, t *Trajectory) (verdict, error)
}

func (w *jsonlWriter) Write(t *Trajectory) (verdict, error) {
	if w.bw == nil {
		w.bw = bufio.NewWriterSize(w.out, 1<<16)
	}
	if t.long != nil {
		return w.long(w, t)
	}
	var v verdict
	line := w.line(t, &v, w.meta)
	if line == nil {
		if v.skip == "" {
			v.skip = reasonNoMessages
		}
		return v, nil
	}
	return v, writeLine(w.bw, line)
}

// writeLine writes v to w as one line of JSON (textJSON): a line of
// openai-jsonl, sharegpt, atif or preference.
func writeLine(w io.Writer, v any) error {
	b, err := textJSON(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// textJSON returns v as JSON the way export writes text: as
// json.Marshal does, but with <, > and & as themselves. json.Marshal
// writes each as a six-byte escape (\u003c), for JSON put in HTML pages,
// so a text of them came out six times its size (an 8 MiB record, a
// 48 MiB line); every JSON reader reads both the same.
func textJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func (w *jsonlWriter) Close() error {
	if w.bw == nil {
		return nil
	}
	return w.bw.Flush()
}

// ---- OpenAI chat fine-tuning format

type openAIFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type openAIToolCall struct {
	ID       string         `json:"id"`
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

type openAIMessage struct {
	Role    string  `json:"role"`
	Content *string `json:"content"`
	// ReasoningContent is an assistant message's visible reasoning, in
	// the field OpenAI-compatible reasoning APIs return it in and
	// reasoning models' chat templates read.
	ReasoningContent string           `json:"reasoning_content,omitempty"`
	ToolCalls        []openAIToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string           `json:"tool_call_id,omitempty"`
	Name             string           `json:"name,omitempty"`
}

type openAIExample struct {
	Messages []openAIMessage   `json:"messages"`
	Tools    []json.RawMessage `json:"tools,omitempty"`
	Metadata *Metadata         `json:"metadata,omitempty"`
}

// Metadata describes a trajectory on its openai-jsonl or sharegpt line,
// for filtering a dataset after the export.
type Metadata struct {
	// Session is the session whose head ends the trajectory.
	Session string `json:"session"`
	// Head is that head, "session@step", and HeadID its hash.
	Head   string `json:"head"`
	HeadID string `json:"head_id"`
	// Steps counts the trajectory's steps.
	Steps int `json:"steps"`
	// Outcome and Reward are the trajectory's (Trajectory.Outcome, .Reward).
	Outcome string   `json:"outcome,omitempty"`
	Reward  *float64 `json:"reward,omitempty"`
	// Labels are the steps' labels merged, newer steps winning.
	Labels map[string]string `json:"labels,omitempty"`
	// Model is the newest model named on the path.
	Model string `json:"model,omitempty"`
	// ForkedFrom is the step the head's session was forked from,
	// "session@step", if it is a fork.
	ForkedFrom string `json:"forked_from,omitempty"`
	// Truncated is true if the trajectory's older steps were pruned
	// (cairn prune): it starts part-way.
	Truncated bool `json:"truncated,omitempty"`
}

// metadataOf returns t's metadata, whether it is held or too long to
// hold.
func metadataOf(t *Trajectory) *Metadata {
	h := t.Head()
	m := &Metadata{Session: t.Session, Head: refName(headRef(h)), HeadID: h.ID.String(),
		Steps: t.steps(), Outcome: t.Outcome, Reward: t.Reward, Truncated: t.Truncated}
	if len(t.Labels) > 0 {
		m.Labels = t.Labels
	}
	if l := t.long; l != nil {
		// What the first pass read of the path (long.go).
		m.Model, m.ForkedFrom = l.model, l.forkedFrom
		return m
	}
	for _, s := range t.Steps {
		if s.Rec != nil && s.Rec.Model != "" {
			m.Model = s.Rec.Model
		}
		if s.Origin != nil && s.Session == t.Session {
			m.ForkedFrom = refName(*s.Origin)
		}
	}
	return m
}

// openAIMessages converts convention messages to OpenAI's chat shape:
// tool call arguments become JSON text, an assistant message that only
// calls tools has null content, its reasoning is reasoning_content.
func openAIMessages(msgs []cairn.Message) []openAIMessage {
	out := make([]openAIMessage, 0, len(msgs))
	for _, m := range msgs {
		content := m.Content
		om := openAIMessage{Role: m.Role, Content: &content, ToolCallID: m.ToolCallID, Name: m.Name}
		if m.Role == "assistant" {
			om.ReasoningContent = m.Reasoning
		}
		for _, tc := range m.ToolCalls {
			om.ToolCalls = append(om.ToolCalls, openAIToolCall{ID: tc.ID, Type: "function",
				Function: openAIFunction{Name: tc.Name, Arguments: argsText(tc.Arguments)}})
		}
		if m.Role == "assistant" && content == "" && len(om.ToolCalls) > 0 {
			om.Content = nil
		}
		if m.Role != "tool" {
			// Both are tool-result fields (docs/records.md: "tool
			// only"); OpenAI's format has them on no other role.
			om.Name, om.ToolCallID = "", ""
		}
		out = append(out, om)
	}
	return out
}

// Tool-call arguments come as a JSON object or as a JSON string holding
// their text (OpenAI's form; usually an object's text, but a model may
// emit any text), or not at all. settleArguments, the one place that
// decides what absent arguments are, gives every call of a trajectory,
// whatever source its conversation was read from (records, an adapter's
// state), an object or a string; each format then writes what its
// readers expect: OpenAI's format text (argsText), ShareGPT and ATIF an
// object (argsValue), Parquet the settled value.

// settleArguments sets the arguments of every tool call of r to what
// export writes: absent or null as the empty object {}, an object or a
// string as given. Arguments of another kind (a number, a list) are an
// error, in the convention's words, saying where.
func settleArguments(r *cairn.Record) error {
	for i := range r.Messages {
		calls := r.Messages[i].ToolCalls
		for j := range calls {
			a := bytes.TrimSpace(calls[j].Arguments)
			switch {
			case len(a) == 0 || string(a) == "null":
				calls[j].Arguments = json.RawMessage("{}")
			case a[0] == '{' || a[0] == '"':
				// A record's are checked by the convention already; an
				// adapter's state may hold anything.
				if err := jsontext.IJSON(a); err != nil {
					return fmt.Errorf("messages[%d].tool_calls[%d]: arguments %w", i, j, err)
				}
				calls[j].Arguments = a
			default:
				return fmt.Errorf("messages[%d].tool_calls[%d]: arguments is %s, not a JSON object or a string", i, j, jsonKind(a))
			}
		}
	}
	return nil
}

// argsText returns settled tool-call arguments as text: a string's own
// text as given, an object's compact JSON.
func argsText(a json.RawMessage) string {
	if len(a) > 0 && a[0] == '"' {
		var text string
		if json.Unmarshal(a, &text) == nil {
			return text
		}
	}
	return string(argsObject(a))
}

// argsValue returns settled tool-call arguments as a JSON object: an
// object as is, a string holding an object's text as that object. ok is
// false for a string holding other text: value is then that string, as
// JSON.
func argsValue(a json.RawMessage) (value json.RawMessage, ok bool) {
	if len(a) == 0 || a[0] != '"' {
		return argsObject(a), true
	}
	var text string
	if json.Unmarshal(a, &text) != nil {
		return json.RawMessage("{}"), true
	}
	if obj := bytes.TrimSpace([]byte(text)); len(obj) > 0 && obj[0] == '{' && json.Valid(obj) {
		return argsObject(obj), true
	}
	return a, false
}

// argsObject returns an object's compact JSON; {} for text that is no
// JSON object, which settled arguments never are.
func argsObject(a json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if len(a) == 0 || a[0] != '{' || json.Compact(&buf, a) != nil {
		return json.RawMessage("{}")
	}
	return buf.Bytes()
}

// messagesOf concatenates the messages of steps.
func messagesOf(steps []Step) []cairn.Message {
	var msgs []cairn.Message
	for _, s := range steps {
		if s.Rec != nil {
			msgs = append(msgs, s.Rec.Messages...)
		}
	}
	return msgs
}

// toolsOf returns the tools of the newest step that lists tools; an
// empty list ("tools": [], no tools from that step on) lists none, and
// gives nil.
func toolsOf(steps []Step) []json.RawMessage {
	for i := len(steps) - 1; i >= 0; i-- {
		if r := steps[i].Rec; r != nil && r.Tools != nil {
			if len(r.Tools) == 0 {
				return nil
			}
			return r.Tools
		}
	}
	return nil
}

// chatMessages returns t's messages for a chat format, or nil with v.skip
// set, as chatCheck.chatVerdict decides: a trajectory with a record that
// breaks the convention is skipped whole (its messages cannot be read,
// and a conversation with a hole would teach the wrong thing), as is one
// with a tool result that follows no tool call, and one without
// messages. Raw records beside conventional ones have no messages; v
// notes them.
func chatMessages(t *Trajectory, v *verdict) []cairn.Message {
	keep, ok := checkHeld(t).chatVerdict(v)
	if !ok {
		return nil
	}
	return messagesOf(t.Steps)[:keep]
}

// openAILine returns t's openai-jsonl line, or nil with v.skip set, as
// chatCheck.verdict decides.
func openAILine(t *Trajectory, v *verdict, meta bool) any {
	keep, ok := checkHeld(t).verdict(v)
	if !ok {
		return nil
	}
	ex := openAIExample{Messages: openAIMessages(messagesOf(t.Steps)[:keep]), Tools: toolsOf(t.Steps)}
	if meta {
		ex.Metadata = metadataOf(t)
	}
	return ex
}

// ---- ShareGPT, as LLaMA-Factory's SharegptDatasetConverter reads it:
// an optional system turn first, then turns that alternate strictly
// between the user's side (human, observation) and the assistant's
// (gpt, function_call), starting with the user's and ending with the
// assistant's. A trajectory breaking that is skipped by the reader, so
// messages are merged into turns that keep it (see docs/export.md).

type shareGPTTurn struct {
	From  string `json:"from"`
	Value string `json:"value"`
}

type shareGPTExample struct {
	ID            string         `json:"id"`
	Conversations []shareGPTTurn `json:"conversations"`
	// Tools is the tool definitions as JSON text (LLaMA-Factory's form).
	Tools    string    `json:"tools,omitempty"`
	Metadata *Metadata `json:"metadata,omitempty"`
}

// shareGPTCall is one call of a function_call turn.
type shareGPTCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// shareGPTBuild is a ShareGPT turn being built from messages.
type shareGPTBuild struct {
	from    string
	texts   []string
	calls   []shareGPTCall
	results []string
	// callIDs and resultIDs are the tool call ids of calls and results,
	// to put results in call order (inCallOrder).
	callIDs, resultIDs []string
}

// inCallOrder puts an observation's results in the order of the calls
// of the function_call turn before it, which they answer (the reader
// pairs the two lists by position): each result goes to the first call
// of its id not answered yet; results for no call follow, as given.
func (b *shareGPTBuild) inCallOrder(calls *shareGPTBuild) {
	if len(b.results) < 2 {
		return
	}
	taken := make([]bool, len(calls.callIDs))
	pos := make([]int, len(b.results))
	for i, id := range b.resultIDs {
		pos[i] = len(taken) + i
		for j, cid := range calls.callIDs {
			if !taken[j] && cid == id {
				taken[j], pos[i] = true, j
				break
			}
		}
	}
	order := make([]int, len(b.results))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return pos[x] - pos[y] })
	results := make([]string, len(order))
	for i, o := range order {
		results[i] = b.results[o]
	}
	b.results = results
}

func (b *shareGPTBuild) userSide() bool { return b.from == "human" || b.from == "observation" }

// value renders the turn: a function_call's one call as an object,
// parallel calls as a list; an observation's one result as given,
// parallel results as a JSON list of strings, in call order; text
// (and text that met an observation) joined by blank lines.
func (b *shareGPTBuild) value() string {
	var parts []string
	switch {
	case len(b.calls) == 1:
		j, _ := textJSON(b.calls[0])
		parts = append(parts, string(j))
	case len(b.calls) > 1:
		j, _ := textJSON(b.calls)
		parts = append(parts, string(j))
	case len(b.results) == 1:
		parts = append(parts, b.results[0])
	case len(b.results) > 1:
		j, _ := textJSON(b.results)
		parts = append(parts, string(j))
	}
	return strings.Join(append(parts, b.texts...), "\n\n")
}

// shareGPTLine maps a trajectory's messages onto alternating turns:
// leading system messages become the system turn; user messages (and
// later system messages) human turns; an assistant message's text a gpt
// turn, its tool calls one function_call turn; tool results one
// observation turn. Turns of one side that meet are merged: texts
// joined, calls and results gathered. What cannot be kept is noted in
// v: assistant text beside tool calls (a function_call turn is JSON
// only), and user or tool turns after the last assistant turn.
func shareGPTLine(t *Trajectory, v *verdict, meta bool) any {
	msgs := chatMessages(t, v)
	if len(msgs) == 0 {
		return nil
	}
	var turns []shareGPTTurn
	b := &shareGPTTurns{v: v, done: func(turn shareGPTTurn) error {
		turns = append(turns, turn)
		return nil
	}}
	for _, m := range msgs {
		b.add(m)
	}
	b.end()
	n, ok := b.verdict()
	if !ok {
		return nil
	}
	ex := shareGPTExample{ID: t.Session}
	if len(b.system) > 0 {
		ex.Conversations = append(ex.Conversations, b.systemTurn())
	}
	ex.Conversations = append(ex.Conversations, turns[:n]...)
	if tools := toolsOf(t.Steps); len(tools) > 0 {
		b, _ := textJSON(tools)
		ex.Tools = string(b)
	}
	if meta {
		ex.Metadata = metadataOf(t)
	}
	return ex
}

// shareGPTTurns builds a conversation's ShareGPT turns from its
// messages, fed one at a time: done gets each turn once no later message
// can change it (a turn is merged into only while it is the last). What
// cannot be kept is noted in v.
type shareGPTTurns struct {
	v      *verdict
	done   func(shareGPTTurn) error
	system []string
	// last is the turn being built, before the one built before it.
	last, before  *shareGPTBuild
	turns         int  // turns started
	answered      int  // turns up to the last of the assistant's side
	startsWithGPT bool // the first turn is the assistant's
	err           error
}

// start makes b the turn being built, handing the last one to done.
func (s *shareGPTTurns) start(b *shareGPTBuild) {
	s.finish()
	s.before, s.last = s.last, b
	s.turns++
	if s.turns == 1 {
		s.startsWithGPT = !b.userSide()
	}
}

// finish hands the turn being built to done.
func (s *shareGPTTurns) finish() {
	b := s.last
	if b == nil || s.err != nil {
		return
	}
	if !b.userSide() {
		s.answered = s.turns
	}
	if b.from == "observation" && s.before != nil && s.before.from == "function_call" {
		b.inCallOrder(s.before)
	}
	s.err = s.done(shareGPTTurn{From: b.from, Value: b.value()})
}

func (s *shareGPTTurns) userSide(from, text, callID string) {
	l := s.last
	switch {
	case l == nil || !l.userSide():
		l = &shareGPTBuild{from: from}
		s.start(l)
		if from == "observation" {
			l.results, l.resultIDs = append(l.results, text), append(l.resultIDs, callID)
			return
		}
	case from == "observation" && l.from == "observation":
		l.results, l.resultIDs = append(l.results, text), append(l.resultIDs, callID)
		return
	}
	l.texts = append(l.texts, text)
}

// add maps m onto the turns: leading system messages become the system
// turn; user messages (and later system messages) human turns; an
// assistant message's text a gpt turn, its tool calls one function_call
// turn; tool results one observation turn. Turns of one side that meet
// are merged: texts joined, calls and results gathered. Assistant text
// beside tool calls is noted (a function_call turn is JSON only).
func (s *shareGPTTurns) add(m cairn.Message) {
	v := s.v
	if m.Reasoning != "" {
		v.leave(reasonReasoning)
	}
	switch {
	case m.Role == "system" && s.turns == 0:
		s.system = append(s.system, m.Content)
	case m.Role == "system", m.Role == "user":
		s.userSide("human", m.Content, "")
	case m.Role == "tool":
		s.userSide("observation", m.Content, m.ToolCallID)
	case len(m.ToolCalls) == 0: // assistant text
		switch l := s.last; {
		case l != nil && l.from == "gpt":
			l.texts = append(l.texts, m.Content)
		case l != nil && l.from == "function_call":
			if m.Content != "" {
				v.leave(reasonTextBeside)
			}
		default:
			s.start(&shareGPTBuild{from: "gpt", texts: []string{m.Content}})
		}
	default: // assistant tool calls
		if m.Content != "" {
			v.leave(reasonTextBeside)
		}
		l := s.last
		switch {
		case l != nil && l.from == "gpt":
			if strings.Join(l.texts, "") != "" {
				v.leave(reasonTextBeside)
			}
			l.from, l.texts = "function_call", nil
		case l == nil || l.from != "function_call":
			l = &shareGPTBuild{from: "function_call"}
			s.start(l)
		}
		for _, tc := range m.ToolCalls {
			args, _ := argsValue(tc.Arguments)
			l.calls = append(l.calls, shareGPTCall{Name: tc.Name, Arguments: args})
			l.callIDs = append(l.callIDs, tc.ID)
		}
	}
}

// end hands the last turn to done, and returns done's first error.
func (s *shareGPTTurns) end() error {
	s.finish()
	s.before, s.last = nil, nil
	return s.err
}

// verdict says, once every message is added and the conversation ended,
// how many turns after the system turn the line holds (those up to the
// last of the assistant's side: trailing user or tool turns are noted),
// or that it is skipped (v.skip says why).
func (s *shareGPTTurns) verdict() (n int, ok bool) {
	n = s.answered
	if n < s.turns {
		s.v.leave(reasonTrailing)
	}
	switch {
	case n == 0:
		s.v.skip = reasonNoAnswer
		return 0, false
	case s.startsWithGPT:
		s.v.skip = reasonStartsWithGPT
		return 0, false
	}
	return n, true
}

// systemTurn is the system turn: the leading system messages.
func (s *shareGPTTurns) systemTurn() shareGPTTurn {
	return shareGPTTurn{From: "system", Value: strings.Join(s.system, "\n\n")}
}

// ---- ATIF (Harbor's Agent Trajectory Interchange Format, v1.4)

// ATIFVersion is the ATIF schema version written.
const ATIFVersion = "ATIF-v1.4"

type atifAgent struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	ModelName string `json:"model_name,omitempty"`
}

type atifToolCall struct {
	ToolCallID   string          `json:"tool_call_id"`
	FunctionName string          `json:"function_name"`
	Arguments    json.RawMessage `json:"arguments"`
}

type atifResult struct {
	SourceCallID *string `json:"source_call_id"`
	Content      string  `json:"content"`
}

type atifObservation struct {
	Results []atifResult `json:"results"`
}

type atifMetrics struct {
	PromptTokens     *int64   `json:"prompt_tokens,omitempty"`
	CompletionTokens *int64   `json:"completion_tokens,omitempty"`
	CachedTokens     *int64   `json:"cached_tokens,omitempty"`
	CostUSD          *float64 `json:"cost_usd,omitempty"`
}

// add returns m (a new one if nil) with a record's tokens and cost
// added to it.
func (m *atifMetrics) add(tk *cairn.Tokens, cost *float64) *atifMetrics {
	if m == nil {
		m = &atifMetrics{}
	}
	sum := func(p *int64, n int64) *int64 {
		if p != nil {
			n += *p
		}
		return &n
	}
	if tk != nil {
		m.PromptTokens, m.CompletionTokens = sum(m.PromptTokens, tk.Prompt), sum(m.CompletionTokens, tk.Completion)
		if tk.Cached > 0 {
			m.CachedTokens = sum(m.CachedTokens, tk.Cached)
		}
	}
	if cost != nil {
		c := *cost
		if m.CostUSD != nil {
			c += *m.CostUSD
		}
		m.CostUSD = &c
	}
	return m
}

type atifStep struct {
	StepID           int              `json:"step_id"`
	Timestamp        string           `json:"timestamp,omitempty"`
	Source           string           `json:"source"`
	ModelName        string           `json:"model_name,omitempty"`
	Message          string           `json:"message"`
	ReasoningContent string           `json:"reasoning_content,omitempty"`
	ToolCalls        []atifToolCall   `json:"tool_calls,omitempty"`
	Observation      *atifObservation `json:"observation,omitempty"`
	Metrics          *atifMetrics     `json:"metrics,omitempty"`
	Extra            map[string]any   `json:"extra,omitempty"`
}

type atifFinalMetrics struct {
	TotalPromptTokens     int64    `json:"total_prompt_tokens"`
	TotalCompletionTokens int64    `json:"total_completion_tokens"`
	TotalCachedTokens     int64    `json:"total_cached_tokens"`
	TotalCostUSD          *float64 `json:"total_cost_usd,omitempty"`
	TotalSteps            int      `json:"total_steps"`
}

type atifTrajectory struct {
	SchemaVersion string           `json:"schema_version"`
	SessionID     string           `json:"session_id"`
	Agent         atifAgent        `json:"agent"`
	Steps         []atifStep       `json:"steps"`
	Notes         string           `json:"notes,omitempty"`
	FinalMetrics  atifFinalMetrics `json:"final_metrics"`
	Extra         map[string]any   `json:"extra,omitempty"`
}

// atifLine maps a trajectory onto ATIF: each system and user message is a
// step of that source; each assistant message an "agent" step with its
// tool calls; tool results become the observation of the agent step
// that called them. A cairn step's tokens and cost go to its last agent
// step; a step without one gives them to the agent step before it (the
// model calls it reports came before its record), or, before the first
// agent step, to the first one, so the steps' metrics add up to
// final_metrics. A record outside the convention becomes a system step with an
// empty message and the record in extra.record.
func atifLine(t *Trajectory, v *verdict, _ bool) any {
	taken := map[string]bool{}
	for _, s := range t.Steps {
		takeATIFCallIDs(taken, s)
	}
	b := newATIFBuilder(v, taken)
	for _, s := range t.Steps {
		b.add(s)
	}
	if b.n == 0 {
		// ATIF needs at least one step (Harbor refuses an empty list).
		v.skip = reasonNoATIFSteps
		if t.fromState {
			v.skip = reasonNoStateMessages
		}
		return nil
	}
	doc := b.doc(t)
	doc.Steps = b.steps
	return doc
}

// atifBuilder makes the ATIF steps of a trajectory's steps, fed to it
// oldest first (atifLine). An ATIF step may change after the cairn step
// that made it: a tool result joins the agent step that made its call,
// however far back, and usage recorded without an answer goes to the
// last agent step. To write a trajectory too long to hold (atif_long.go),
// a first pass, dry, notes for each ATIF step the changes later cairn
// steps make to it (later, late), keeping only the ATIF steps of the step
// being fed; the writer's pass then holds an ATIF step until the last of
// those is fed (settled), or finishes it ahead (finish).
type atifBuilder struct {
	v   *verdict
	ids *atifCallIDs
	// agent, final, cost and haveCost are the trajectory's, so far.
	agent    atifAgent
	final    atifFinalMetrics
	cost     float64
	haveCost bool
	// steps are the ATIF steps made and held, numbered from base (an
	// index: step_id - 1); n counts every ATIF step made.
	steps   []atifStep
	base, n int
	// fed counts the cairn steps fed.
	fed       int
	lastAgent int          // the step tool results without a call go to
	prevAgent int          // the last agent step
	pending   *atifMetrics // usage recorded before the first agent step
	// madeAt holds the cairn step (by fed) that made each held step.
	madeAt []int
	// dry drops the ATIF steps of each cairn step once the next is fed,
	// noting in later, for each ATIF step a later cairn step changes, the
	// last one (by fed), and in late what each such change is. A
	// writer's pass reads both; gone is set if it was asked for an ATIF
	// step it no longer held. done holds the steps it finished ahead of
	// their turn (finish), by the last cairn step that changes them.
	dry   bool
	later map[int]int
	late  map[int][]atifLate
	done  map[int]int
	gone  bool
}

// atifLate is a change a cairn step makes to an ATIF step made before
// it: a tool result, message msg of cairn step fed, answering the
// ATIF step's call number call (-1: no call of its id, or a result
// without an id), unmatched its tool_call_id if no call on the path
// has that id; or, if msg is -1, usage.
type atifLate struct {
	fed, msg, call int
	unmatched      string
	tokens         *cairn.Tokens
	cost           *float64
}

// addResult adds a tool result to st's observation; unmatched, if set,
// is its tool_call_id, which no call on the path has.
func (st *atifStep) addResult(res atifResult, unmatched string) {
	if unmatched != "" {
		ids, _ := st.Extra["unmatched_tool_call_ids"].([]string)
		st.Extra["unmatched_tool_call_ids"] = append(ids, unmatched)
	}
	if st.Observation == nil {
		st.Observation = &atifObservation{}
	}
	st.Observation.Results = append(st.Observation.Results, res)
}

// waitingSince returns the cairn step (by fed) that made the oldest
// held ATIF step; ok is false if none is held.
func (b *atifBuilder) waitingSince() (fed int, ok bool) {
	if len(b.madeAt) == 0 {
		return 0, false
	}
	return b.madeAt[0], true
}

// finish makes the oldest held ATIF step whole ahead of its turn: it
// applies the changes that the cairn steps not fed yet make to it
// (late), reading the tool results among them from l again, so that
// the steps after it need not be held until those are fed. What it
// holds meanwhile is that step's own results.
func (b *atifBuilder) finish(l *longPath) error {
	i := b.base
	st := &b.steps[0]
	var todo []atifLate
	for _, c := range b.late[i] {
		if c.fed > b.fed {
			todo = append(todo, c)
		}
	}
	if len(todo) == 0 {
		return fmt.Errorf("read trajectory of %s again: an ATIF step waits for no step", l.head)
	}
	content := map[[2]int]string{} // by fed and message
	first, last := -1, 0
	for _, c := range todo {
		if c.msg >= 0 {
			if first < 0 {
				first = c.fed
			}
			last = c.fed
		}
	}
	if first > 0 {
		fed := first
		err := l.eachStepOf(first-1, func(s Step) error {
			cs := s.Step
			for _, c := range todo {
				if c.fed != fed || c.msg < 0 {
					continue
				}
				if s.Rec == nil || c.msg >= len(s.Rec.Messages) {
					return fmt.Errorf("read trajectory of %s again: %s holds no message %d", l.head, cs, c.msg)
				}
				content[[2]int{c.fed, c.msg}] = s.Rec.Messages[c.msg].Content
			}
			if fed == last {
				return errEnough
			}
			fed++
			return nil
		})
		if err != nil && !errors.Is(err, errEnough) {
			return err
		}
	}
	for _, c := range todo {
		if c.msg < 0 {
			st.Metrics = st.Metrics.add(c.tokens, c.cost)
			continue
		}
		res := atifResult{Content: content[[2]int{c.fed, c.msg}]}
		if c.call >= 0 {
			id := st.ToolCalls[c.call].ToolCallID
			res.SourceCallID = &id
		}
		st.addResult(res, c.unmatched)
	}
	b.done[i] = todo[len(todo)-1].fed
	delete(b.later, i)
	return nil
}

func newATIFBuilder(v *verdict, taken map[string]bool) *atifBuilder {
	return &atifBuilder{v: v, ids: newATIFCallIDs(taken), agent: atifAgent{Name: "unknown", Version: "unknown"},
		lastAgent: -1, prevAgent: -1}
}

// at returns ATIF step index i, to change it; nil if it is no longer
// held (a dry pass then notes that the step being fed changes it), or
// was finished ahead with this change (finish).
func (b *atifBuilder) at(i int) *atifStep {
	if last, ok := b.done[i]; ok && b.fed <= last {
		return nil
	}
	if i >= b.base {
		return &b.steps[i-b.base]
	}
	if b.dry {
		b.later[i] = b.fed
	} else {
		b.gone = true
	}
	return nil
}

// push makes st the next ATIF step.
func (b *atifBuilder) push(st atifStep) {
	b.n++
	st.StepID = b.n
	b.steps = append(b.steps, st)
	b.madeAt = append(b.madeAt, b.fed)
}

// settled returns the held ATIF steps, oldest first, up to the first
// that a cairn step not fed yet changes, and holds them no more.
func (b *atifBuilder) settled() []atifStep {
	k := 0
	for ; k < len(b.steps); k++ {
		i := b.base + k
		if last, ok := b.later[i]; ok && last > b.fed {
			break
		}
		delete(b.later, i)
		delete(b.late, i)
	}
	out := b.steps[:k:k]
	b.steps, b.madeAt, b.base = b.steps[k:], b.madeAt[k:], b.base+k
	return out
}

// add makes the ATIF steps of s, the step after the last one fed.
func (b *atifBuilder) add(s Step) {
	b.fed++
	if b.dry {
		clear(b.steps)
		b.steps, b.madeAt, b.base = b.steps[:0], b.madeAt[:0], b.n
	}
	v := b.v
	ts := s.Time.UTC().Format(time.RFC3339Nano)
	where := func() map[string]any {
		return map[string]any{"cairn_step": s.String(), "cairn_id": s.ID.String()}
	}
	first := b.n
	r := s.Rec
	if r == nil {
		if s.Broken != nil {
			_, reason := brokenReasons(s.Broken)
			v.leave(reason)
			v.explain(reason, fmt.Sprintf("%s: %v", s.Step, s.Broken))
		}
		if len(s.Record) > 0 {
			x := where()
			x["record"] = json.RawMessage(s.Record)
			if err := jsontext.IJSON(s.Record); err != nil {
				// Raw, it would make the line one that JSON readers
				// refuse or misread: the record goes as text.
				delete(x, "record")
				x["record_text"] = string(s.Record)
				v.leave(reasonRecordText)
				v.explain(reasonRecordText, fmt.Sprintf("%s: the record %v", s.Step, err))
			}
			b.push(atifStep{Timestamp: ts, Source: "system", Extra: x})
		}
		return
	}
	if r.Agent != nil && b.agent.Name == "unknown" {
		b.agent.Name = r.Agent.Name
		if r.Agent.Version != "" {
			b.agent.Version = r.Agent.Version
		}
	}
	if r.Model != "" && b.agent.ModelName == "" {
		b.agent.ModelName = r.Model
	}
	stepAgent := -1
	for k, m := range r.Messages {
		switch m.Role {
		case "tool":
			id := m.ToolCallID
			res := atifResult{Content: m.Content}
			// ATIF ties a result to a call of its own step: it goes to
			// the agent step that made the call it answers, wherever
			// that is, under that call's id in the export.
			target, nth, callID, ok := b.ids.answer(id)
			late := atifLate{fed: b.fed, msg: k, call: -1}
			if ok && id != "" {
				res.SourceCallID = &callID
				late.call = nth
			}
			unmatched := ""
			if !ok {
				// No call of that id on the path: kept, without a
				// source_call_id, its id in the step's extra.
				if id != "" {
					v.leave(reasonUnmatchedResult)
					v.explain(reasonUnmatchedResult, fmt.Sprintf("%s: tool_call_id %q", s.Step, id))
				}
				if b.lastAgent < 0 {
					b.push(atifStep{Timestamp: ts, Source: "system", Observation: &atifObservation{}, Extra: where()})
					b.lastAgent = b.n - 1
				}
				target, unmatched = b.lastAgent, id
				late.unmatched = id
			}
			if st := b.at(target); st != nil {
				st.addResult(res, unmatched)
			} else if b.dry {
				b.late[target] = append(b.late[target], late)
			}
		case "assistant":
			st := atifStep{Timestamp: ts, Source: "agent", ModelName: r.Model,
				Message: m.Content, ReasoningContent: m.Reasoning, Extra: where()}
			msg := b.ids.message()
			for _, tc := range m.ToolCalls {
				id := b.ids.call(tc.ID, b.n, msg, len(st.ToolCalls))
				given := tc.ID
				if o, ok := s.renamed[tc.ID]; ok {
					given = o // the agent's id, which settleCallIDs renamed
				}
				if id != given {
					orig, _ := st.Extra["original_tool_call_ids"].(map[string]string)
					if orig == nil {
						orig = map[string]string{}
						st.Extra["original_tool_call_ids"] = orig
					}
					orig[id] = given
				}
				args, ok := argsValue(tc.Arguments)
				if !ok {
					// ATIF's arguments is an object: text that is not
					// one goes, as given, to extra.raw_arguments.
					raw, _ := st.Extra["raw_arguments"].(map[string]string)
					if raw == nil {
						raw = map[string]string{}
						st.Extra["raw_arguments"] = raw
					}
					raw[id] = argsText(tc.Arguments)
					args = json.RawMessage("{}")
				}
				st.ToolCalls = append(st.ToolCalls, atifToolCall{ToolCallID: id, FunctionName: tc.Name, Arguments: args})
			}
			st.Metrics, b.pending = b.pending, nil
			b.push(st)
			b.lastAgent = b.n - 1
			stepAgent, b.prevAgent = b.lastAgent, b.lastAgent
		default:
			b.push(atifStep{Timestamp: ts, Source: m.Role, Message: m.Content, Extra: where()})
		}
	}
	if r.Tokens != nil {
		b.final.TotalPromptTokens += r.Tokens.Prompt
		b.final.TotalCompletionTokens += r.Tokens.Completion
		b.final.TotalCachedTokens += r.Tokens.Cached
	}
	if r.CostUSD != nil {
		b.cost += *r.CostUSD
		b.haveCost = true
	}
	if r.Tokens != nil || r.CostUSD != nil {
		if stepAgent < 0 {
			stepAgent = b.prevAgent
		}
		if stepAgent < 0 {
			b.pending = b.pending.add(r.Tokens, r.CostUSD)
		} else if st := b.at(stepAgent); st != nil {
			st.Metrics = st.Metrics.add(r.Tokens, r.CostUSD)
		} else if b.dry {
			b.late[stepAgent] = append(b.late[stepAgent], atifLate{fed: b.fed, msg: -1, tokens: r.Tokens, cost: r.CostUSD})
		}
	}
	if extra := stepExtra(r); len(extra) > 0 && b.n > first {
		// Put what ATIF has no field for on the step's last ATIF step.
		x := b.at(b.n - 1).Extra
		for k, v := range extra {
			x[k] = v
		}
	}
}

// doc returns t's ATIF document as the steps fed make it, but for its
// steps (an empty list).
func (b *atifBuilder) doc(t *Trajectory) atifTrajectory {
	doc := atifTrajectory{SchemaVersion: ATIFVersion, SessionID: t.Session, Agent: b.agent, Steps: []atifStep{}}
	head := t.Head()
	doc.Extra = map[string]any{"cairn_head": head.String(), "cairn_head_id": head.ID.String()}
	if len(t.Labels) > 0 {
		doc.Extra["labels"] = t.Labels
	}
	meta := metadataOf(t)
	if meta.Outcome != "" {
		doc.Extra["outcome"] = meta.Outcome
	}
	if meta.Reward != nil {
		doc.Extra["reward"] = *meta.Reward
	}
	if meta.ForkedFrom != "" {
		doc.Extra["forked_from"] = meta.ForkedFrom
	}
	if t.Truncated {
		doc.Extra["truncated"] = true
		doc.Notes = fmt.Sprintf("truncated: the history before %s was pruned", t.first())
	}
	doc.FinalMetrics = b.final
	if b.haveCost {
		cost := b.cost
		doc.FinalMetrics.TotalCostUSD = &cost
	}
	doc.FinalMetrics.TotalSteps = b.n
	return doc
}

// atifCallIDs gives the tool calls of one trajectory ids of their own
// and each tool result the call it answers. An agent may reuse an id
// ("call_1" in every step, or twice in one message), and ATIF joins a
// result to its call by id, so the first call of an id keeps it and a
// later one gets id#2, id#3, … (the first of these that no call of the
// trajectory has). A result answers the first unanswered call of its id
// in the nearest preceding assistant message that has one (results come
// in their calls' order); when every call of its id is answered, the
// last such call. What it holds is an id and an index per call, and of
// the calls of an id answered, only the last.
type atifCallIDs struct {
	taken map[string]bool            // the agent's ids and those given
	calls map[string][]*atifCallSite // by the agent's id, in order
	msgs  int
}

type atifCallSite struct {
	step, msg int
	nth       int    // its place among its ATIF step's tool calls
	id        string // in the export
	answered  bool
}

// newATIFCallIDs returns the ids of a trajectory whose tool calls use
// the ids in taken (takeATIFCallIDs).
func newATIFCallIDs(taken map[string]bool) *atifCallIDs {
	return &atifCallIDs{taken: taken, calls: map[string][]*atifCallSite{}}
}

// takeATIFCallIDs adds the ids s's tool calls use to taken.
func takeATIFCallIDs(taken map[string]bool, s Step) {
	if s.Rec == nil {
		return
	}
	for _, m := range s.Rec.Messages {
		for _, tc := range m.ToolCalls {
			taken[tc.ID] = true
		}
	}
}

// message numbers the next assistant message.
func (c *atifCallIDs) message() int {
	c.msgs++
	return c.msgs
}

// call records a call of the agent's id made by ATIF step index step in
// message msg, its nth call, and returns its id in the export.
func (c *atifCallIDs) call(id string, step, msg, nth int) string {
	out := id
	if len(c.calls[id]) > 0 {
		for n := 2; ; n++ {
			out = id + "#" + strconv.Itoa(n)
			if !c.taken[out] {
				break
			}
		}
		c.taken[out] = true
	}
	c.calls[id] = append(c.calls[id], &atifCallSite{step: step, msg: msg, nth: nth, id: out})
	return out
}

// answer returns the ATIF step index, place among its calls and export
// id of the call a result of the agent's id answers; ok is false if no
// call had that id.
func (c *atifCallIDs) answer(id string) (step, nth int, callID string, ok bool) {
	sites := c.calls[id]
	if len(sites) == 0 {
		return 0, 0, "", false
	}
	last := sites[len(sites)-1]
	pick := last
	for i := len(sites) - 1; i >= 0; i-- {
		if !sites[i].answered {
			pick = sites[i]
			for _, s := range sites[:i] {
				if s.msg == pick.msg && !s.answered {
					pick = s
					break
				}
			}
			break
		}
	}
	pick.answered = true
	// An answered call but the last is never picked again.
	c.calls[id] = slices.DeleteFunc(sites, func(s *atifCallSite) bool { return s.answered && s != last })
	return pick.step, pick.nth, pick.id, true
}

// stepExtra returns a record's fields that ATIF has no place for.
func stepExtra(r *cairn.Record) map[string]any {
	extra := map[string]any{}
	if r.LatencyMS != nil {
		extra["latency_ms"] = *r.LatencyMS
	}
	if len(r.Labels) > 0 {
		extra["labels"] = r.Labels
	}
	if r.Outcome != "" {
		extra["outcome"] = r.Outcome
	}
	if r.Reward != nil {
		extra["reward"] = *r.Reward
	}
	return extra
}
