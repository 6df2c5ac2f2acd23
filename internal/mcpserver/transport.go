package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnlog/cairn/internal/jsontext"
	"github.com/cairnlog/cairn/internal/termtext"
)

// MaxMessage bounds one inbound JSON-RPC message (one line), as the
// SDK's own stdio transport does.
const MaxMessage = mcp.DefaultMaxLineLength

// MaxInFlight bounds the bytes of the tool calls being answered at once.
// The SDK reads the next line as soon as it has started a call, so a
// client could otherwise have any number of 16 MiB checkpoints in
// memory at once; past this bound the transport starts no further call
// until answers have gone out (it reads at most readAhead bytes of lines
// ahead). A single call may always run.
const MaxInFlight = MaxMessage

// MaxCalls bounds the requests being answered at once, whatever their
// size. MaxInFlight counts what a request brings, not what its answer
// takes: a resume of a 1 MiB state is a line of 100 bytes whose answer
// takes several MiB to build, and the SDK starts each call as soon as it
// is read, so a client that sent 300 of them and did not read its stdout
// (or read it slowly) held 300 answers in memory at once, 2 GB. Past
// MaxCalls the transport starts no further call until an answer has gone
// out, and reads no more than readAhead bytes of lines ahead: a client
// that stops reading stops the server reading too.
const MaxCalls = 8

// Transport returns the transport of `cairn mcp`: newline-delimited
// JSON-RPC over r and w, as the SDK's StdioTransport, except that a line
// that is not a JSON-RPC message (not JSON, no "jsonrpc":"2.0", a bad id,
// a batch) or longer than MaxMessage is answered with a JSON-RPC
// error and skipped. The SDK ends the whole session on such a line,
// dropping the answers of calls still running and saying why in Go's
// type names. Tool calls in flight are bounded by MaxInFlight bytes. A
// request the client cancels (notifications/cancelled) gets no answer,
// as MCP requires: the SDK cancels its context, then answers it anyway.
func Transport(r io.Reader, w io.Writer) mcp.Transport {
	return transport(r, w, MaxInFlight)
}

// transport is Transport with tool calls in flight bounded by maxInFlight.
func transport(r io.Reader, w io.Writer, maxInFlight int) mcp.Transport {
	out := newOutput(w)
	fl := newFlight(maxInFlight, MaxCalls)
	pr, pw := io.Pipe()
	// At the end of input the calls still running, and those read but
	// not started, are answered as long as answers go out: once none has
	// for endGrace, those the client has not taken are dropped and
	// nothing more is taken. The grace counts from the end of input as
	// the read-ahead finds it, not from when the filter reaches it: the
	// filter may be held (MaxCalls, MaxInFlight, an id in use) by answers
	// the client does not read.
	grace := endGrace
	ended := func() {
		fl.landedNow()
		var expire func()
		expire = func() {
			if idle := time.Since(fl.lastLanded()); idle < grace {
				time.AfterFunc(grace-idle, expire)
				return
			}
			out.abort()
			fl.close()
		}
		time.AfterFunc(grace, expire)
	}
	go func() {
		err := filterLines(r, pw, out, fl, ended)
		if err == nil {
			// The client closed its side: the SDK ends the session at
			// the end of its input, dropping the calls still running, so
			// the end is passed on only once they have all been answered
			// (or no answer has gone out for endGrace: a call stuck on its
			// store, or answers the client does not read, which are
			// dropped).
			fl.drain()
		}
		pw.CloseWithError(err)
	}()
	return &transportOf{IOTransport: &mcp.IOTransport{Reader: &input{PipeReader: pr}, Writer: &answerWriter{out: out, fl: fl}}, out: out}
}

// input is the SDK's side of the filtered input. A read after its Close
// is the end of input: the SDK closes it itself once a write has failed
// (the client took no more answers) and the calls have ended, and its
// read in progress then failed with io.ErrClosedPipe, which Run returned
// as the session's error instead of ErrAbandoned, the write's.
type input struct {
	*io.PipeReader
	closed atomic.Bool
}

func (in *input) Read(p []byte) (int, error) {
	n, err := in.PipeReader.Read(p)
	if err != nil && in.closed.Load() {
		err = io.EOF
	}
	return n, err
}

func (in *input) Close() error {
	in.closed.Store(true)
	return in.PipeReader.Close()
}

// transportOf is the transport of one session: its output is abandoned
// when the session's context ends.
type transportOf struct {
	*mcp.IOTransport
	out *output
}

// Connect connects the transport; when ctx ends, writes still waiting
// for the client to take them fail, so that the SDK, which waits for
// every call to end, ends too (a client that reads no answer would
// otherwise keep cairn mcp running after SIGINT).
func (t *transportOf) Connect(ctx context.Context) (mcp.Connection, error) {
	context.AfterFunc(ctx, t.out.abort)
	return t.IOTransport.Connect(ctx)
}

// output writes whole messages, the SDK's and the filter's, one at a
// time, from one goroutine, so that a write a client does not take (it
// reads no answer) can be abandoned: abort makes the writes waiting,
// and all later ones, fail with ErrAbandoned. The goroutine is left in
// the write the client does not take.
type output struct {
	w       io.Writer
	writes  chan outWrite
	aborted chan struct{}
	once    sync.Once
}

type outWrite struct {
	p    []byte
	done chan error
}

// ErrAbandoned is the error of a write abandoned because the session
// ended (its context, or the end of its input and endGrace) while the
// client took no more of its output: what Run returns then.
var ErrAbandoned = errors.New("write stdout: the client took no more, and the session ended")

func newOutput(w io.Writer) *output {
	o := &output{w: w, writes: make(chan outWrite), aborted: make(chan struct{})}
	go o.run()
	return o
}

func (o *output) run() {
	for {
		select {
		case wr := <-o.writes:
			_, err := o.w.Write(wr.p)
			wr.done <- err
		case <-o.aborted:
			return
		}
	}
}

// Write writes p whole, or fails once the output is aborted. An aborted
// write may still go out later: its caller must not reuse p (the SDK and
// the filter write each message from a slice of its own).
func (o *output) Write(p []byte) (int, error) {
	wr := outWrite{p: p, done: make(chan error, 1)}
	select {
	case o.writes <- wr:
	case <-o.aborted:
		return 0, ErrAbandoned
	}
	select {
	case err := <-wr.done:
		if err != nil {
			return 0, err
		}
		return len(p), nil
	case <-o.aborted:
		return 0, ErrAbandoned
	}
}

// abort fails the writes waiting for the client, and all later ones.
func (o *output) abort() { o.once.Do(func() { close(o.aborted) }) }

// answerWriter is the SDK's side of the output: each message it writes
// that answers a request ends that request's flight, and one that
// answers a request the client cancelled is not sent.
type answerWriter struct {
	out *output
	fl  *flight
}

func (a *answerWriter) Write(p []byte) (int, error) {
	key, ok := answerTo(p)
	if !ok {
		return a.out.Write(p)
	}
	return a.fl.answer(key, len(p), func() (int, error) { return a.out.Write(fixCode(p)) })
}

// fixCode gives an error answer of code 0 the code -32600 (invalid
// request). The SDK answers so a call before initialize, or a second
// initialize, with a code that JSON-RPC does not define and clients do
// not expect.
func fixCode(p []byte) []byte {
	const zero = `,"error":{"code":0,`
	i := bytes.Index(p, []byte(zero))
	if i < 0 || bytes.Contains(p[:i], []byte(`"result"`)) {
		return p
	}
	fixed := make([]byte, 0, len(p)+6)
	fixed = append(fixed, p[:i]...)
	fixed = append(fixed, `,"error":{"code":-32600,`...)
	return append(fixed, p[i+len(zero):]...)
}

// Close is called by the SDK once the session has ended and its calls
// have all returned: nothing more is written, and output's goroutine ends.
func (a *answerWriter) Close() error {
	a.fl.close()
	a.out.abort()
	return nil
}

// answerTo returns the id key of the request that the message p (one
// line, as the SDK encodes it: jsonrpc, then id, then result or error)
// answers, if it is an answer.
func answerTo(p []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(p, []byte(`{"jsonrpc":"2.0","id":`))
	if !ok || len(rest) == 0 {
		return "", false
	}
	end := bytes.IndexByte(rest, ',')
	if rest[0] == '"' {
		end = stringEnd(rest)
	}
	if end <= 0 || end >= len(rest) {
		return "", false
	}
	if !bytes.HasPrefix(rest[end:], []byte(`,"result":`)) && !bytes.HasPrefix(rest[end:], []byte(`,"error":`)) {
		return "", false // a request of the server's own
	}
	return idKey(rest[:end])
}

// stringEnd returns the index just past the JSON string at the start of
// b, or -1.
func stringEnd(b []byte) int {
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// idKey returns a key for the JSON-RPC id raw (a string or an integer)
// that is the same however the id is written: "a" and "\u0061" alike.
func idKey(raw []byte) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if usableID(raw) == nil {
		return "", false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return "s" + s, true
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return "", false
	}
	return "n" + strconv.FormatInt(n, 10), true
}

// flight holds the requests that have gone to the SDK and not been
// answered yet, at most calls of them, and counts the bytes of the tool
// calls among them.
type flight struct {
	mu     sync.Mutex
	cond   *sync.Cond
	limit  int
	calls  int
	total  int
	open   map[string]*request // by id key: the requests in flight
	closed bool
	landed time.Time // when a request last landed (landedNow)
}

// request is one request in flight.
type request struct {
	n           int  // bytes counted for it
	cancellable bool // anything but initialize, which MCP does not let a client cancel
	cancelled   bool // by the client: its answer is not sent
	answering   bool // its answer is being written
}

func newFlight(limit, calls int) *flight {
	f := &flight{limit: limit, calls: max(calls, 1), open: map[string]*request{}}
	f.cond = sync.NewCond(&f.mu)
	return f
}

// depart waits until a request of n counted bytes fits beside those in
// flight, in bytes and in number (one always fits), then holds it under
// key; the client may cancel it if cancellable. It reports false, at
// once, if a request in flight already has key and is not being
// answered: the SDK would drop the second without an answer.
func (f *flight) depart(key string, n int, cancellable bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for r, ok := f.open[key]; ok; r, ok = f.open[key] {
		if !r.answering || f.closed {
			return false
		}
		// Its answer is going out: the client may have read it.
		f.cond.Wait()
	}
	for (len(f.open) >= f.calls || f.total > 0 && f.total+n > f.limit) && !f.closed {
		f.cond.Wait()
	}
	f.total += n
	f.open[key] = &request{n: n, cancellable: cancellable}
	return true
}

// cancel marks the request in flight under key, if any and if the
// client may cancel it, as cancelled: the SDK cancels its context and
// then answers it all the same, with the error its work stopped on, and
// MCP forbids that answer. The request stays in flight, its bytes
// counted, until that answer has been dropped: its work holds them
// until it stops, the end of input waits for it, and its id stays in
// use until the SDK is done with it.
func (f *flight) cancel(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.open[key]; ok && r.cancellable {
		r.cancelled = true
	}
}

// answer writes the answer to the request under key with write, unless
// the client cancelled that request, then ends its flight. A request
// with the same id waits for that end (depart): a client that has read
// the answer may reuse the id at once. The write holds no lock: a
// client that does not read its answers must not keep the filter from
// the end of its input, nor drain from its grace.
func (f *flight) answer(key string, size int, write func() (int, error)) (int, error) {
	f.mu.Lock()
	r, ok := f.open[key]
	if ok && r.cancelled {
		f.landLocked(key)
		f.mu.Unlock()
		return size, nil
	}
	if ok {
		r.answering = true
	}
	f.mu.Unlock()
	n, err := write()
	f.mu.Lock()
	f.landLocked(key)
	f.mu.Unlock()
	return n, err
}

func (f *flight) landLocked(key string) {
	r, ok := f.open[key]
	if !ok {
		return
	}
	f.total -= r.n
	delete(f.open, key)
	f.landed = time.Now()
	f.cond.Broadcast()
}

// landedNow counts now as the last landing, for the end of input.
func (f *flight) landedNow() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.landed = time.Now()
}

// lastLanded returns when a request last landed (or landedNow).
func (f *flight) lastLanded() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.landed
}

// endGrace bounds how long the end of input waits for an answer to go
// out, while calls are in flight or read and not started.
var endGrace = 60 * time.Second

// drain waits until every request in flight has been answered or
// cancelled, or the flight is closed (the session has ended, or the end
// of input's grace has passed).
func (f *flight) drain() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.open) > 0 && !f.closed {
		f.cond.Wait()
	}
}

// has reports whether a request in flight has the id key.
func (f *flight) has(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.open[key]
	return ok
}

// inFlight returns the bytes in flight.
func (f *flight) inFlight() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.total
}

// isClosed reports whether the flight is closed: nothing more is taken.
func (f *flight) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

func (f *flight) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.cond.Broadcast()
}

// filterLines copies the valid messages of r, one a line, to to, and
// answers every other line on errs. With fl, it counts each tool call in
// flight, waiting before one that does not fit, and returns ErrAbandoned
// once fl is closed. It returns nil at the end of r, and calls ended,
// if set, as soon as it has read to that end (readAhead bytes ahead of
// the line it is filtering).
func filterLines(r io.Reader, to io.Writer, errs io.Writer, fl *flight, ended func()) error {
	lines := readLines(r, ended)
	defer lines.stop()
	for {
		line, tooLong, err := lines.next()
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			var reply []byte
			var msg message
			if tooLong {
				reply = errorReply(idOfHead(line), jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: the message exceeds %d bytes (send a big state as a patch of what changed)", MaxMessage))
			} else {
				reply, msg = check(line)
			}
			if reply == nil && fl != nil {
				ok := msg.fly(fl, len(line))
				if fl.isClosed() {
					return ErrAbandoned // the session ended while the line waited
				}
				if !ok {
					// Not with its id: the client would take the error for
					// the answer of the request still running under it.
					reply = errorReply(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf(
						"invalid request: id %s is the id of a request still being answered; give each request in flight its own id", clip(msg.id)))
				}
			}
			if reply != nil && fl != nil {
				reply = unattributed(reply, fl)
			}
			var werr error
			if reply != nil {
				_, werr = errs.Write(reply)
			} else {
				// Without the whitespace around it: the SDK's decoder
				// reads spaces after the message as trailing data and
				// ends the session.
				_, werr = to.Write(append(bytes.TrimSpace(line), '\n'))
			}
			if werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// unattributed returns reply, an error answer the filter writes, with
// the id null if its id is that of a request in flight: the client would
// take it for that request's answer (a refused line beside a checkpoint
// still running under its id made the checkpoint, which then landed,
// look refused).
func unattributed(reply []byte, fl *flight) []byte {
	key, ok := answerTo(reply)
	if !ok || !fl.has(key) {
		return reply
	}
	var r struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(reply, &r) != nil {
		return reply
	}
	return append([]byte(`{"jsonrpc":"2.0","id":null,"error":`+string(r.Error)+`}`), '\n')
}

// message is what the filter needs of a line that passes.
type message struct {
	method string          // "" for a response
	id     json.RawMessage // as sent; nil for a notification
	params json.RawMessage
}

// fly holds a request in fl until its answer, counting a tool call's n
// bytes, and marks a request that the client cancels, whose answer is
// then not sent. It reports false for a request whose id is that of a
// request in flight.
func (m message) fly(fl *flight, n int) bool {
	if m.method == "notifications/cancelled" {
		for _, p := range jsontext.Members(m.params) {
			if key, ok := idKey(p.Value); ok && p.Name == "requestId" {
				fl.cancel(key)
			}
		}
	}
	key, ok := idKey(m.id)
	if !ok {
		return true // a notification
	}
	if m.method != "tools/call" {
		n = 0 // small; held only so that it is answered before the end
	}
	return fl.depart(key, n, m.method != "initialize")
}

// readAhead bounds the bytes of the lines read ahead of the one the
// filter holds (one line is always read ahead). The filter waits, before
// a call that does not fit (MaxCalls, MaxInFlight) or whose id is that
// of an answer going out, for answers to go out; reading on a little
// lets it see the end of its input meanwhile. A client that closed
// stdin and reads no answer (it waits for cairn mcp to exit first) kept
// it running for ever when its last calls were held so: the end of input
// was behind them, and its grace (endGrace) never began.
const readAhead = 64 << 10

// lineQueue holds the lines read ahead of the filter.
type lineQueue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	lines   []readResult
	bytes   int
	stopped bool
}

// readResult is what readLine returned for one line.
type readResult struct {
	line    []byte
	tooLong bool
	err     error
}

// readLines reads the lines of r, readAhead bytes (or one line) ahead of
// next, from a goroutine of its own, and calls ended, if set, when it
// reads to the end of r.
func readLines(r io.Reader, ended func()) *lineQueue {
	q := &lineQueue{}
	q.cond = sync.NewCond(&q.mu)
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, tooLong, err := readLine(br, MaxMessage)
			if errors.Is(err, io.EOF) && ended != nil {
				ended() // before the filter can see the end
			}
			if !q.push(readResult{line, tooLong, err}) || err != nil {
				return
			}
		}
	}()
	return q
}

// push queues l once it fits in readAhead beside the lines queued (it
// always fits in an empty queue); false once the queue is stopped.
func (q *lineQueue) push(l readResult) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.lines) > 0 && q.bytes+len(l.line) > readAhead && !q.stopped {
		q.cond.Wait()
	}
	if q.stopped {
		return false
	}
	q.lines = append(q.lines, l)
	q.bytes += len(l.line)
	q.cond.Broadcast()
	return true
}

// next returns the next line read, as readLine does.
func (q *lineQueue) next() ([]byte, bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.lines) == 0 {
		q.cond.Wait()
	}
	l := q.lines[0]
	q.lines[0] = readResult{}
	q.lines = q.lines[1:]
	q.bytes -= len(l.line)
	q.cond.Broadcast()
	return l.line, l.tooLong, l.err
}

// stop ends the reading goroutine once its read returns: the filter
// takes no more lines.
func (q *lineQueue) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stopped = true
	q.cond.Broadcast()
}

// readLine reads one line without its newline, holding at most limit
// bytes: of a longer line (tooLong) only the first headBytes are kept,
// for its id, and the rest is read and dropped.
func readLine(br *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit+1 {
				tooLong = true
				line = append(line[:min(len(line), headBytes):min(len(line), headBytes)], chunk[:max(0, min(len(chunk), headBytes-len(line)))]...)
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
	}
}

// headBytes is how much of a line over MaxMessage is kept to find its id.
const headBytes = 4 << 10

// maxNesting is how deep arrays and objects may nest in a message: the
// SDK's decoder takes no deeper one.
const maxNesting = 1000

// idOfHead returns the id of the message that head (the start of a line
// too long to read) begins, if its members before the first one cut off
// hold a usable id; else nil.
func idOfHead(head []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if key == "id" {
			return usableID(v)
		}
	}
	return nil
}

// check returns the error reply for a line that the SDK cannot take as
// a message, or would take as another message than the one sent: it
// reads a member given twice as the last, a fractional id as the
// integer below it, a null id as no id (and answers nothing), and a line
// with an id but neither a method nor a result as an answer to nothing
// (and drops it); its complaints about params name Go types. It returns
// nil for a line the SDK can take.
func check(line []byte) ([]byte, message) {
	var none message
	if at := jsontext.Deeper(line, maxNesting); at >= 0 {
		// The SDK's decoder refuses it as no JSON-RPC message, and
		// encoding/json past 10,000 levels as no JSON.
		return errorReply(idOfHead(line[:min(len(line), headBytes)]), jsonrpc.CodeInvalidRequest, fmt.Sprintf(
			"invalid request: arrays and objects nest more than %d levels deep (at byte %d), deeper than a message may", maxNesting, at)), none
	}
	if !json.Valid(line) {
		// The SDK's decoder reads the first JSON value of a line and
		// drops what follows: a second message on the line went
		// unanswered, and its caller waited for ever.
		return malformed(line), none
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil || bytes.TrimSpace(line)[0] == '[' {
		return malformed(line), none
	}
	members := jsontext.Members(line)
	var id, method, params json.RawMessage
	have := map[string]bool{}
	for _, m := range members {
		if have[m.Name] {
			return errorReply(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: member %s is given twice; give each member once", termtext.Quote(m.Name))), none
		}
		have[m.Name] = true
		switch m.Name {
		case "id":
			id = m.Value
		case "method":
			method = m.Value
		case "params":
			params = m.Value
		}
	}
	if !utf8.Valid(line) {
		return errorReply(usableID(id), jsonrpc.CodeParseError, "parse error: the line is not UTF-8 text (JSON must be UTF-8)"), none
	}
	if at, esc := jsontext.LoneSurrogate(line); at >= 0 {
		return errorReply(usableID(id), jsonrpc.CodeInvalidRequest, fmt.Sprintf(
			"invalid request: the escape %s at byte %d is half of a UTF-16 surrogate pair without its other half: JSON strings must be Unicode text", esc, at)), none
	}
	if _, ok := msg.(*jsonrpc.Request); !ok {
		if !have["result"] && !have["error"] {
			return errorReply(usableID(id), jsonrpc.CodeInvalidRequest, `invalid request: want a "method" (a request or notification), or a "result" or "error" (a response)`), none
		}
		if have["result"] && have["error"] {
			// Its id is one of the server's requests, not the client's.
			return errorReply(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf(`invalid response: the answer to id %s has both a "result" and an "error"; give one`, clip(id))), none
		}
		return nil, none // a response to a request of the server's
	}
	if have["id"] && usableID(id) == nil {
		return errorReply(nil, jsonrpc.CodeInvalidRequest, badID(id)), none
	}
	if method[0] != '"' {
		return errorReply(usableID(id), jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: method: want the method's name, a string, not %s", clip(method))), none
	}
	name := msg.(*jsonrpc.Request).Method
	if have["id"] && strings.HasPrefix(name, "notifications/") {
		// The SDK runs it as the notification and answers it in Go's
		// words: notifications/cancelled with an id cancelled the call it
		// named and was answered "context canceled".
		return errorReply(usableID(id), jsonrpc.CodeInvalidRequest, fmt.Sprintf(
			"invalid request: %s is a notification, which has no id: send it without one", termtext.Quote(name))), none
	}
	if have["id"] && len(name) > maxName {
		// No method is named so long; the SDK's answer would echo it whole.
		return errorReply(usableID(id), jsonrpc.CodeMethodNotFound, "method not found: "+termtext.Quote(name)), none
	}
	req := message{method: name, id: id, params: params}
	if params == nil || string(params) == "null" {
		return nil, req
	}
	if params[0] != '{' {
		return errorReply(usableID(id), jsonrpc.CodeInvalidParams, fmt.Sprintf("invalid params: want a JSON object, not %s", clip(params))), none
	}
	members = jsontext.Members(params)
	seen := map[string]bool{}
	for _, m := range members {
		// The SDK takes the last; a proxy or log reading the line may
		// take the first (of a tools/call's "name", another tool).
		if seen[m.Name] {
			return errorReply(usableID(id), jsonrpc.CodeInvalidParams, fmt.Sprintf("invalid params: member %s is given twice; give each member once", termtext.Quote(m.Name))), none
		}
		seen[m.Name] = true
	}
	if reply := checkParamTypes(usableID(id), name, members); reply != nil {
		return reply, none
	}
	if what, ok := listed[name]; ok {
		if reply := checkCursor(usableID(id), what, members); reply != nil {
			return reply, none
		}
	}
	if string(method) == `"tools/call"` {
		for _, m := range members {
			switch {
			case m.Name == "name" && m.Value[0] != '"':
				return errorReply(usableID(id), jsonrpc.CodeInvalidParams, fmt.Sprintf("invalid params: name: want the tool's name, a string, not %s", clip(m.Value))), none
			case m.Name == "arguments" && m.Value[0] != '{' && string(m.Value) != "null":
				return errorReply(usableID(id), jsonrpc.CodeInvalidParams, fmt.Sprintf("invalid params: arguments: want a JSON object of the tool's arguments, not %s", clip(m.Value))), none
			case m.Name == "name" && len(m.Value) > maxName:
				// No tool is named so long; the SDK's answer would echo it whole.
				var tool string
				_ = json.Unmarshal(m.Value, &tool)
				return errorReply(usableID(id), jsonrpc.CodeInvalidParams, "unknown tool "+termtext.Quote(tool)), none
			}
		}
	}
	return nil, req
}

// notJSON says why line, which is not one JSON value, is not.
func notJSON(line []byte) string {
	if bytes.HasPrefix(line, []byte("\ufeff")) {
		return "the line starts with a byte order mark (U+FEFF), which JSON does not allow: send UTF-8 text without one"
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	var first json.RawMessage
	if dec.Decode(&first) == nil {
		return fmt.Sprintf("the line goes on after its first JSON value (from byte %d), and none of it was run: send one message a line", dec.InputOffset())
	}
	return "the line is not JSON"
}

// maxName bounds the names of methods and tools, with room to spare:
// a longer one names none, and is shown clipped.
const maxName = 256

// malformed returns the error reply for a line the SDK cannot decode.
func malformed(line []byte) []byte {
	if !json.Valid(line) {
		return errorReply(nil, jsonrpc.CodeParseError, "parse error: "+notJSON(line))
	}
	if bytes.TrimSpace(line)[0] == '[' {
		// MCP dropped JSON-RPC batches (2025-06-18); the SDK ends the
		// session on one.
		return errorReply(nil, jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batches are not taken; send one message a line")
	}
	var id, method, version json.RawMessage
	response := false
	for _, m := range jsontext.Members(line) {
		switch m.Name {
		case "id":
			id = m.Value
		case "method":
			method = m.Value
		case "jsonrpc":
			version = m.Value
		case "result", "error":
			response = true
		}
	}
	switch {
	case id != nil && usableID(id) == nil:
		return errorReply(nil, jsonrpc.CodeInvalidRequest, badID(id))
	case method == nil && response && id == nil:
		return errorReply(nil, jsonrpc.CodeInvalidRequest,
			`invalid response: a "result" or an "error" without an "id": want the id of the request it answers`)
	case method == nil && response:
		// Its id is one of the server's requests, not the client's.
		return errorReply(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf(
			`invalid response: the answer to id %s: want "jsonrpc":"2.0" and a "result" or an "error" object of a "code" and a "message"`, clip(id)))
	case method != nil && method[0] != '"':
		return errorReply(usableID(id), jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: method: want the method's name, a string, not %s", clip(method)))
	case bytes.HasPrefix(bytes.TrimSpace(line), []byte("{")) && string(version) != `"2.0"`:
		got := "none"
		if version != nil {
			got = clip(version)
		}
		return errorReply(usableID(id), jsonrpc.CodeInvalidRequest, fmt.Sprintf(`invalid request: "jsonrpc": want "2.0", not %s`, got))
	}
	return errorReply(usableID(id), jsonrpc.CodeInvalidRequest, `invalid request: want a JSON-RPC 2.0 message: an object with "jsonrpc":"2.0", a "method" and a string or integer "id" (none for a notification), or a response`)
}

// badID is the words of a refused request whose id is no string and no
// integer of at most maxID in magnitude.
func badID(id json.RawMessage) string {
	return fmt.Sprintf("invalid request: id %s: want a string or an integer of at most 2^53 either side of 0 (leave it out for a notification)", clip(id))
}

// maxID is the largest integer id the SDK answers with the id sent: it
// reads ids as float64, so 2^53+1 came back as 2^53 (and a request
// with the id 2^53 beside it got no answer).
const maxID = 1 << 53

// usableID returns id if it is a string or an integer of at most maxID
// in magnitude (what MCP allows and what a client can match an answer
// to), else nil.
func usableID(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return nil
	}
	if id[0] == '"' {
		return id
	}
	digits := bytes.TrimPrefix(id, []byte("-"))
	if len(digits) == 0 || len(digits) > 16 {
		return nil
	}
	n := 0
	for _, c := range digits {
		if c < '0' || c > '9' {
			return nil
		}
		n = n*10 + int(c-'0')
	}
	if n > maxID {
		return nil
	}
	return id
}

// clip returns JSON text for a message, shortened if long.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:37]) + "..."
	}
	return string(b)
}

// errorReply is a JSON-RPC error response line with id (null if nil).
func errorReply(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{code, msg}})
	return append(b, '\n')
}

// paramTypes names, for the methods whose params the SDK decodes into
// its own Go types, the JSON type of each member it reads (a member of a
// member as "outer.inner"). The SDK refused a member of another type in
// Go's words, naming its types ("cannot unmarshal ... into Go struct
// field mcp.SetLoggingLevelParams.level of type string"). Every
// request's "_meta" is an object.
var paramTypes = map[string][]paramType{
	"initialize": {{"protocolVersion", "string"}, {"capabilities", "object"}, {"clientInfo", "object"},
		{"clientInfo.name", "string"}, {"clientInfo.version", "string"}, {"clientInfo.title", "string"}},
	"logging/setLevel":    {{"level", "string"}},
	"resources/read":      {{"uri", "string"}},
	"prompts/get":         {{"name", "string"}, {"arguments", "object"}},
	"completion/complete": {{"ref", "object"}, {"argument", "object"}, {"context", "object"}},
}

// paramType is a member of a method's params and the JSON type it takes.
type paramType struct{ path, kind string }

// checkParamTypes returns the error reply for a request of method whose
// params (members) hold a member paramTypes names, or "_meta", of
// another JSON type than it takes (null is none, as the SDK reads it),
// or nil.
func checkParamTypes(id json.RawMessage, method string, members []jsontext.Member) []byte {
	for _, p := range append([]paramType{{"_meta", "object"}}, paramTypes[method]...) {
		v := memberAt(members, p.path)
		if v == nil || string(v) == "null" || jsonKind(v) == p.kind {
			continue
		}
		return errorReply(id, jsonrpc.CodeInvalidParams, fmt.Sprintf("invalid params: %s: want %s, not %s",
			p.path, map[string]string{"string": "a string", "object": "a JSON object"}[p.kind], clip(v)))
	}
	return nil
}

// memberAt returns the value of the member at path ("a" or "a.b") among
// members, or nil if there is none.
func memberAt(members []jsontext.Member, path string) json.RawMessage {
	first, rest, nested := strings.Cut(path, ".")
	for _, m := range members {
		if m.Name != first {
			continue
		}
		if !nested {
			return m.Value
		}
		if m.Value[0] != '{' {
			return nil // the outer member's own type is checked first
		}
		return memberAt(jsontext.Members(m.Value), rest)
	}
	return nil
}

// listed names what each list method of MCP lists.
var listed = map[string]string{
	"tools/list":               "tool",
	"prompts/list":             "prompt",
	"resources/list":           "resource",
	"resources/templates/list": "resource template",
}

// checkCursor returns the error reply for a list request whose cursor
// (among members, its params) is not one this server gave, or nil. It
// gives none: it lists everything in one page. The SDK answered such a
// cursor "invalid params" without a reason, or in Go's words for one
// that is no string, and answered a cursor of its own making that a
// client forged with a page it never offered. A cursor that is null or
// empty is no cursor.
func checkCursor(id json.RawMessage, what string, members []jsontext.Member) []byte {
	for _, m := range members {
		if m.Name != "cursor" || string(m.Value) == "null" {
			continue // a null cursor is none, as an empty one: clients send it so
		}
		var cursor string
		if m.Value[0] != '"' || json.Unmarshal(m.Value, &cursor) != nil {
			return errorReply(id, jsonrpc.CodeInvalidParams, fmt.Sprintf(
				"invalid params: cursor: want a string, a cursor this server gave, not %s (this server lists every %s in one page and gives no cursor: send the request without one)", clip(m.Value), what))
		}
		if cursor != "" {
			return errorReply(id, jsonrpc.CodeInvalidParams, fmt.Sprintf(
				"invalid params: this server lists every %s in one page and gives no cursor, so the cursor %s is not one it gave: send the request without one", what, clip(m.Value)))
		}
	}
	return nil
}
