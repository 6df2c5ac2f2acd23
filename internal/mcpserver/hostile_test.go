package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
)

// stdio is a `cairn mcp` session as the binary runs it: the server over
// Transport, fed line by line.
type stdio struct {
	t   *testing.T
	ws  *cairn.Workspace
	in  *io.PipeWriter
	out *bufio.Reader
}

func startStdio(t *testing.T) *stdio {
	t.Helper()
	return startStdioOn(t, mem.New(), MaxInFlight)
}

func startStdioOn(t *testing.T, store cas.Store, maxInFlight int) *stdio {
	t.Helper()
	ws := cairn.OpenStore(store)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = New(ws, "test").Run(ctx, transport(inR, outW, maxInFlight))
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		go io.Copy(io.Discard, outR)
		<-done
	})
	s := &stdio{t: t, ws: ws, in: inW, out: bufio.NewReaderSize(outR, 1<<20)}
	s.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if r := s.next(); string(r.ID) != `"init"` || r.Error != nil {
		t.Fatalf("initialize: %+v", r)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func (s *stdio) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

// reply is one line the server wrote.
type reply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	raw string
}

// next returns the next line the server writes, within 10 s.
func (s *stdio) next() reply {
	s.t.Helper()
	r, err := s.nextErr()
	if err != nil {
		s.t.Fatal(err)
	}
	return r
}

// nextErr is next for goroutines other than the test's.
func (s *stdio) nextErr() (reply, error) {
	type res struct {
		line string
		err  error
	}
	c := make(chan res, 1)
	go func() {
		l, err := s.out.ReadString('\n')
		c <- res{l, err}
	}()
	select {
	case r := <-c:
		if r.err != nil {
			return reply{}, fmt.Errorf("read: %v", r.err)
		}
		var rep reply
		if err := json.Unmarshal([]byte(r.line), &rep); err != nil {
			return reply{}, fmt.Errorf("line %q: %v", r.line, err)
		}
		rep.raw = r.line
		return rep, nil
	case <-time.After(10 * time.Second):
		return reply{}, errors.New("no answer in 10 s")
	}
}

// TestEveryRequestAnswered: a line that the SDK reads as another message
// than the one sent got no answer, or an answer the client cannot match:
// {"id":3} (no method) and a request with "id":null were dropped, a
// request with "id":1.5 was answered as id 1, one with "id" twice as
// the last; an integer id past 2^53 was answered as another (the SDK reads
// ids as float64: 2^53+1 came back as 2^53); a message nested more than
// 1,000 levels deep was "want a JSON-RPC 2.0 message" (the SDK's decoder
// stops there), past 10,000 "the line is not JSON", without its id. Each
// gets a JSON-RPC error
// now, with the id when it is one a client can match, and the session
// goes on.
func TestEveryRequestAnswered(t *testing.T) {
	s := startStdio(t)
	for _, tc := range []struct {
		line, id string
		code     int
		says     string
	}{
		{`{"jsonrpc":"2.0","id":3}`, "3", -32600, `want a "method"`},
		{`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, "null", -32600, "id null: want a string or an integer"},
		{`{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, "null", -32600, "id 1.5: want a string or an integer"},
		{`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, "null", -32600, "id 9007199254740993: want a string or an integer of at most 2^53"},
		{`{"jsonrpc":"2.0","id":-9007199254740993,"method":"ping"}`, "null", -32600, "id -9007199254740993: want a string or an integer of at most 2^53"},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/list","id":8}`, "null", -32600, `"id" is given twice`},
		{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":[1]}`, "9", -32602, "want a JSON object, not [1]"},
		{`{"jsonrpc":"2.0","id":14,"method":"ping"}{"jsonrpc":"2.0","id":15,"method":"ping"}`, "null", -32700, "goes on after its first JSON value (from byte 41), and none of it was run"},
		{`{"jsonrpc":"2.0","id":16,"method":"ping"} x`, "null", -32700, "goes on after its first JSON value"},
		{"\ufeff" + `{"jsonrpc":"2.0","id":17,"method":"ping"}`, "null", -32700, "byte order mark"},
		{`{"jsonrpc":"2.0","id":18,"method":"` + strings.Repeat("m", 100_000) + `"}`, "18", -32601, `method not found: "` + strings.Repeat("m", 32) + `…" (100000 characters)`},
		{`{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"` + strings.Repeat("t", 100_000) + `"}}`, "19", -32602, `unknown tool "` + strings.Repeat("t", 32) + `…" (100000 characters)`},
		{`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"checkpoint","arguments":{"session":"d","state_json":"{}","record":{"a":` + strings.Repeat("[", 997) + strings.Repeat("]", 997) + `}}}}`, "13", -32600, "nest more than 1000 levels deep (at byte 1132)"},
		{`{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"x":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}}`, `"deep"`, -32600, "nest more than 1000 levels deep"},
		{`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":5}}`, "10", -32602, "name: want the tool's name"},
		{`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"resume","arguments":5}}`, "11", -32602, "arguments: want a JSON object"},
		{`{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"resume","arguments":"x"}}`, `"s"`, -32602, "arguments: want a JSON object"},
	} {
		s.send(tc.line)
		r := s.next()
		if string(r.ID) != tc.id || r.Error == nil || r.Error.Code != tc.code || !strings.Contains(r.Error.Message, tc.says) || len(r.raw) > 1000 {
			t.Errorf("%s: answered %s, want error %d with id %s saying %q", tc.line, strings.TrimSpace(r.raw), tc.code, tc.id, tc.says)
		}
		for _, leak := range []string{"Go value", "mcp.", "unmarshal", "interface {}"} {
			if r.Error != nil && strings.Contains(r.Error.Message, leak) {
				t.Errorf("%s: error %q names %q", tc.line, r.Error.Message, leak)
			}
		}
	}
	s.send(`{"jsonrpc":"2.0","id":12,"method":"ping"}`)
	if r := s.next(); string(r.ID) != "12" || r.Error != nil {
		t.Fatalf("ping after the bad lines: %s", r.raw)
	}
	s.send(`{"jsonrpc":"2.0","id":-9007199254740992,"method":"ping"}`)
	if r := s.next(); string(r.ID) != "-9007199254740992" || r.Error != nil {
		t.Fatalf("ping with the id -2^53: %s", r.raw)
	}
}

// TestCheckpointKeepsText: encoding/json reads bytes that are not UTF-8,
// and a \u escape of half a surrogate pair, as U+FFFD, so checkpoint
// committed a state or record other than the one sent and said nothing.
// Both are refused now, naming the argument, whether the escape is in
// the message or in the JSON text of state_json; nothing is committed.
func TestCheckpointKeepsText(t *testing.T) {
	ws := cairn.OpenStore(mem.New())
	cs := connect(t, ws)
	for _, args := range []string{
		`{"session":"u","state_json":"{\"a\":\"\ud800\"}"}`,
		`{"session":"u","state_json":"{\"a\":\"\\ud800\"}"}`,
		`{"session":"u","state_json":"{}","record":{"note":"\udc00"}}`,
		`{"session":"u","state_json":"{}","record":"{\"note\":\"\\udc00\"}"}`,
		`{"session":"u","patch":[{"op":"add","path":"/a","value":"\ud83d"}]}`,
	} {
		msg := call(t, cs, ToolCheckpoint, json.RawMessage(args), nil, true)
		if !strings.Contains(msg, "surrogate") {
			t.Errorf("checkpoint %s: error %q, want one about the surrogate", args, msg)
		}
	}
	s, _ := ws.Session("u")
	if st, err := s.Head(context.Background()); err == nil {
		t.Fatalf("a refused checkpoint committed %v", st)
	}
	var out StepInfo
	call(t, cs, ToolCheckpoint, json.RawMessage(`{"session":"u","state_json":"{\"a\":\"\\ud83d\\ude00\\\\ud800\"}"}`), &out, false)
	st, err := s.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if doc, _ := st.JSON(context.Background()); string(doc) != `{"a":"\ud83d\ude00\\ud800"}` {
		t.Fatalf("state %s", doc)
	}
}

// TestLineText: over stdio, a line that is not UTF-8 or holds a lone
// surrogate escape is refused with the request's id before the SDK turns
// its strings into U+FFFD.
func TestLineText(t *testing.T) {
	s := startStdio(t)
	for _, tc := range []struct {
		line string
		code int
	}{
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"resume\",\"arguments\":{\"session\":\"a\xff\"}}}", -32700},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask_for_approval","arguments":{"session":"a","question":"ok?\ud800"}}}`, -32600},
	} {
		s.send(tc.line)
		if r := s.next(); r.Error == nil || r.Error.Code != tc.code || string(r.ID) == "null" {
			t.Errorf("%q: answered %s, want error %d with the id", tc.line, strings.TrimSpace(r.raw), tc.code)
		}
	}
}

// TestToolArgumentsInTheirWords: a tool called with arguments it cannot
// take was answered in the SDK's words, of schemas and Go types
// ("validating root: validating /properties/step: type: 1.5 has type
// \"number\"", "Go struct field mcpserver.ResumeIn.step of type uint64",
// "invalid argument: invalid session name"), and an argument given twice,
// or spelled in another case, was taken silently: checkpoint committed to
// the session named last. Each is now a tool error naming the argument
// and what it wants, and nothing is committed.
func TestToolArgumentsInTheirWords(t *testing.T) {
	ws := cairn.OpenStore(mem.New())
	cs := connect(t, ws)
	call(t, cs, ToolCheckpoint, json.RawMessage(`{"session":"a","state_json":"{\"x\":1}"}`), nil, false)
	for _, tc := range []struct{ tool, args, want string }{
		{ToolResume, `{"session":5}`, "session: want a string"},
		{ToolResume, `{}`, "session is required"},
		{ToolResume, `[1]`, "arguments: want a JSON object with session, step"},
		{ToolResume, `{"session":"a","step":1.5}`, "step: want an integer >= 1"},
		{ToolResume, `{"session":"a","step":0}`, "step: want an integer >= 1"},
		{ToolResume, `{"session":"a","step":-1}`, "step: want an integer >= 1"},
		{ToolResume, `{"session":"a","step":"1"}`, "step: want an integer >= 1"},
		{ToolResume, `{"session":"a","step":18446744073709551616}`, "too large"},
		{ToolResume, `{"session":"a","colour":1}`, `unknown argument "colour" (resume takes session, step`},
		{ToolResume, `{"session":"../x"}`, `session "../x": want a session name`},
		{ToolResume, `{"session":"a","session":"b"}`, `argument "session" is given twice`},
		{ToolFork, `{"from":"a@0","to":"b"}`, `from: bad step reference "a@0": steps are numbered from 1`},
		{ToolFork, `{"from":"a","to":".b"}`, `to ".b": want a session name`},
		{ToolShow, `{"ref":"a","record_only":"yes"}`, "record_only: want true or false"},
		{ToolShow, `{"ref":"a@18446744073709551616"}`, `ref: bad step reference "a@18446744073709551616": step number 18446744073709551616 is too large`},
		{ToolLog, `{"ref":"a","limit":99999999999999999999}`, "limit: want an integer"},
		{ToolDiff, `{"a":"a"}`, "b is required"},
		{ToolAsk, `{"session":"a","question":5}`, "question: want a string"},
		{ToolCheckpoint, `5`, "arguments: want a JSON object with session"},
		{ToolCheckpoint, `{"session":"a","state_json":"{}","session":"b"}`, `argument "session" is given twice`},
		{ToolCheckpoint, `{"session":"a","state_json":"{}","Session":"b"}`, `unknown argument "Session"`},
	} {
		msg := call(t, cs, tc.tool, json.RawMessage(tc.args), nil, true)
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%s %s: error %q, want it to say %q", tc.tool, tc.args, msg, tc.want)
		}
		for _, leak := range []string{"Go ", "mcpserver.", "validating", "/properties", "invalid argument", "uint64", "json:"} {
			if strings.Contains(msg, leak) {
				t.Errorf("%s %s: error %q names %q", tc.tool, tc.args, msg, leak)
			}
		}
	}
	if b, _ := ws.Session("b"); b != nil {
		if _, err := b.Head(context.Background()); err == nil {
			t.Fatal("a checkpoint with its session given twice committed to the last one")
		}
	}
}

// gatedStore holds every Put until its gate is closed, and says on
// held when the first one is held.
type gatedStore struct {
	cas.Store
	gate chan struct{}
	held chan struct{}
	once sync.Once
}

func (g *gatedStore) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	g.once.Do(func() { close(g.held) })
	select {
	case <-g.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.Store.Put(ctx, key, data, opts)
}

// TestToolCallsInFlightBounded: the SDK reads the next line as soon as it
// has started a call, so a client could have any number of 16 MiB
// checkpoints in memory at once (20 of 14 MiB took `cairn mcp` to
// 900 MB). The transport now reads no further line while the calls in
// flight and the next one would pass MaxInFlight bytes; one call always
// runs, and small calls beside it are not held.
func TestToolCallsInFlightBounded(t *testing.T) {
	const limit = 64 << 10 // as MaxInFlight, at a size quick to test
	store := &gatedStore{Store: mem.New(), gate: make(chan struct{}), held: make(chan struct{})}
	var open sync.Once
	release := func() { open.Do(func() { close(store.gate) }) }
	t.Cleanup(release)
	s := startStdioOn(t, store, limit)
	big := func(id int) string {
		state, _ := json.Marshal(map[string]string{"x": strings.Repeat("a", limit*2/3)})
		line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
			"params": map[string]any{"name": "checkpoint", "arguments": map[string]any{"session": fmt.Sprint("s", id), "state_json": string(state)}}})
		return string(line)
	}
	go func() {
		s.send(big(1)) // held in the store
		s.send(big(2)) // does not fit beside it: waits
		s.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	}()
	answered := make(chan reply, 3)
	go func() {
		for range 3 {
			r, err := s.nextErr()
			if err != nil {
				r.raw = err.Error()
			}
			answered <- r
		}
	}()
	<-store.held
	select {
	case r := <-answered:
		t.Fatalf("while a call of %d bytes was in flight, a line after one that does not fit beside it was read and answered: %s", limit*2/3, r.raw)
	case <-time.After(3 * time.Second):
	}
	release()
	ids := map[string]bool{}
	for range 3 {
		r := <-answered
		if r.Error != nil {
			t.Errorf("answer %s", r.raw)
		}
		ids[string(r.ID)] = true
	}
	if !ids["1"] || !ids["2"] || !ids["3"] {
		t.Fatalf("answered %v, want 1, 2 and 3", ids)
	}
}

// TestFlightLands: an answer, however its id is written, ends its call's
// flight; a cancelled call's flight ends when the SDK's answer to it,
// which is not sent, passes; a request of the server's own is no answer.
func TestFlightLands(t *testing.T) {
	fl := newFlight(100, MaxCalls)
	for _, id := range []string{`7`, `"a"`, `"b"`} {
		key, ok := idKey([]byte(id))
		if !ok {
			t.Fatalf("idKey(%s) not ok", id)
		}
		fl.depart(key, 10, true)
	}
	written := 0
	write := func() (int, error) { written++; return 1, nil }
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"roots/list"}`,
		`{"jsonrpc":"2.0","id":7,"result":{}}`,
		`{"jsonrpc":"2.0","id":"\u0061","error":{"code":1,"message":"x"}}`,
	} {
		if key, ok := answerTo([]byte(line)); ok {
			fl.answer(key, len(line), write)
		}
	}
	message{method: "notifications/cancelled", params: json.RawMessage(`{"requestId":"b","reason":"x"}`)}.fly(fl, 5)
	if n := fl.inFlight(); n != 10 || written != 2 {
		t.Fatalf("in flight %d bytes, %d answers written before the cancelled call's answer; want 10 and 2", n, written)
	}
	if key, ok := answerTo([]byte(`{"jsonrpc":"2.0","id":"b","result":{}}`)); !ok {
		t.Fatal("no answer")
	} else if n, err := fl.answer(key, 5, write); n != 5 || err != nil || written != 2 {
		t.Fatalf("the cancelled call's answer: %d, %v, %d written; want it dropped", n, err, written)
	}
	if n := fl.inFlight(); n != 0 {
		t.Fatalf("in flight %d bytes after every call landed, want 0", n)
	}
}

// TestServerForgetsSessions: the workspace caches every session a call
// names, with its head's state, and `cairn mcp` never let one go: 24
// checkpoints of 14 MiB to as many sessions took it to 1 GB and kept it
// there. The server now keeps the IdleSessions most recently used and
// has the workspace forget the others.
func TestServerForgetsSessions(t *testing.T) {
	ws := cairn.OpenStore(mem.New())
	cs := connect(t, ws)
	first, err := ws.Session("first")
	if err != nil {
		t.Fatal(err)
	}
	call(t, cs, ToolCheckpoint, json.RawMessage(`{"session":"first","state_json":"{\"big\":1}"}`), nil, false)
	if again, _ := ws.Session("first"); again != first {
		t.Fatal("the workspace does not cache a session in use")
	}
	for i := range 3 * IdleSessions {
		name := fmt.Sprint("n", i)
		call(t, cs, ToolCheckpoint, json.RawMessage(`{"session":"`+name+`","state_json":"{}"}`), nil, false)
		call(t, cs, ToolShow, json.RawMessage(`{"ref":"`+name+`@1"}`), nil, false)
	}
	if again, _ := ws.Session("first"); again == first {
		t.Fatalf("after %d other sessions the workspace still caches session first", 3*IdleSessions)
	}
	// A forgotten session reads its head from the store again.
	var out ResumeOut
	call(t, cs, ToolResume, json.RawMessage(`{"session":"first"}`), &out, false)
	if out.Step != 1 || out.StateJSON != `{"big":1}` {
		t.Fatalf("resume first after it was forgotten: %+v", out)
	}
}

// TestCallBeforeInitialize: a request before initialize, or a second
// initialize, was refused with error code 0, which JSON-RPC does not
// define; it is -32600 (invalid request) now, with the request's id, and
// the session can still be initialized.
func TestCallBeforeInitialize(t *testing.T) {
	ws := cairn.OpenStore(mem.New())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = New(ws, "test").Run(ctx, Transport(inR, outW))
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		go io.Copy(io.Discard, outR)
		<-done
	})
	s := &stdio{t: t, ws: ws, in: inW, out: bufio.NewReader(outR)}
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"resume","arguments":{"session":"a"}}}`)
	if r := s.next(); string(r.ID) != "1" || r.Error == nil || r.Error.Code != -32600 {
		t.Fatalf("a call before initialize: %s, want error -32600 with id 1", r.raw)
	}
	init := `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	s.send(init)
	if r := s.next(); string(r.ID) != "2" || r.Error != nil {
		t.Fatalf("initialize after a refused call: %s", r.raw)
	}
	s.send(strings.Replace(init, `"id":2`, `"id":3`, 1))
	if r := s.next(); string(r.ID) != "3" || r.Error == nil || r.Error.Code != -32600 {
		t.Fatalf("a second initialize: %s, want error -32600 with id 3", r.raw)
	}
}

// TestTooLongLineAnswersItsID: a line over MaxMessage was refused with id
// null, so the client that sent the request waited for its answer for
// ever. The error carries the id now when the line begins with it.
func TestTooLongLineAnswersItsID(t *testing.T) {
	s := startStdio(t)
	huge := strings.Repeat("x", MaxMessage)
	s.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"checkpoint","arguments":{"session":"a","state_json":"` + huge + `"}}}`)
	if r := s.next(); string(r.ID) != "5" || r.Error == nil || !strings.Contains(r.Error.Message, "exceeds") {
		t.Fatalf("a line over %d bytes: %s, want an error with id 5", MaxMessage, r.raw)
	}
	s.send(`{"jsonrpc":"2.0","method":"x","params":{"s":"` + huge + `"},"id":6}`)
	if r := s.next(); string(r.ID) != "null" || r.Error == nil {
		t.Fatalf("a line over %d bytes with its id at the end: %s, want an error with id null", MaxMessage, r.raw)
	}
	s.send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	if r := s.next(); string(r.ID) != "7" || r.Error != nil {
		t.Fatalf("ping after: %s", r.raw)
	}
}

// TestEndOfInputAnswersCallsInFlight: at the end of its input (a client
// that sends its calls and closes stdin, as `printf ... | cairn mcp`
// does), the SDK ended the session at once: the calls still running were
// cancelled and never answered, so a checkpoint piped in was neither
// committed nor refused. They run to their answers now, then the session
// ends.
func TestEndOfInputAnswersCallsInFlight(t *testing.T) {
	store := &gatedStore{Store: mem.New(), gate: make(chan struct{}), held: make(chan struct{})}
	s := startStdioOn(t, store, MaxInFlight)
	s.send(`{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"checkpoint","arguments":{"session":"piped","state_json":"{\"n\":1}"}}}`)
	<-store.held
	s.in.Close()
	time.Sleep(200 * time.Millisecond) // the end of input reaches the SDK while the call runs
	close(store.gate)
	r := s.next()
	if string(r.ID) != `"last"` || r.Error != nil || strings.Contains(string(r.Result), `"isError":true`) {
		t.Fatalf("the call in flight at the end of input: %s", r.raw)
	}
	sess, _ := s.ws.Session("piped")
	if _, err := sess.Head(context.Background()); err != nil {
		t.Fatalf("the checkpoint answered before the end did not land: %v", err)
	}
}

// TestEndOfInputWaitsBounded: the end of input waits for the calls in
// flight no longer than endGrace: a call stuck on its store does not keep
// cairn mcp running after its client has closed stdin.
func TestEndOfInputWaitsBounded(t *testing.T) {
	was := endGrace
	endGrace = 300 * time.Millisecond
	t.Cleanup(func() { endGrace = was })
	store := &gatedStore{Store: mem.New(), gate: make(chan struct{}), held: make(chan struct{})}
	t.Cleanup(func() { close(store.gate) })
	s := startStdioOn(t, store, MaxInFlight)
	s.send(`{"jsonrpc":"2.0","id":"stuck","method":"tools/call","params":{"name":"checkpoint","arguments":{"session":"stuck","state_json":"{}"}}}`)
	<-store.held
	s.in.Close()
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, s.out)
		ended <- err
	}()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end after the end of input with a call stuck")
	}
}

// TestIDInFlightRefused: a request with the id of one still being
// answered was dropped by the SDK, neither run nor answered. It gets a
// JSON-RPC error naming the id now, with the id null: the client takes
// an answer with the id for that of the request running under it (the
// refusal came first, and the checkpoint that landed looked refused).
// The first is answered as ever, once.
func TestIDInFlightRefused(t *testing.T) {
	store := &gatedStore{Store: mem.New(), gate: make(chan struct{}), held: make(chan struct{})}
	var open sync.Once
	release := func() { open.Do(func() { close(store.gate) }) }
	t.Cleanup(release)
	s := startStdioOn(t, store, MaxInFlight)
	s.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"checkpoint","arguments":{"session":"one","state_json":"{}"}}}`)
	<-store.held
	s.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"checkpoint","arguments":{"session":"two","state_json":"{}"}}}`)
	r := s.next()
	if string(r.ID) != "null" || r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "id 5 is the id of a request still being answered") {
		t.Fatalf("a second request with the id of one in flight: %s, want an error with id null naming id 5", r.raw)
	}
	release()
	if r := s.next(); string(r.ID) != "5" || r.Error != nil || strings.Contains(string(r.Result), `"isError":true`) {
		t.Fatalf("the first request: %s", r.raw)
	}
	s.send(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	if r := s.next(); string(r.ID) != "5" || r.Error != nil {
		t.Fatalf("the id once answered, again: %s", r.raw)
	}
}
