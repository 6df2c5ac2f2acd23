package mcpserver

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas/mem"
)

// TestRefusalsBesideCallInFlight: a line the filter refuses was answered
// with its id even when that id was the id of a call still running, and
// the client took the refusal for that call's answer: the checkpoint,
// which then landed, looked refused. Such a refusal carries the id null
// now. A notification sent with an id (notifications/cancelled naming
// the call in flight, under its id or another) cancelled the call, whose
// answer was then never sent, and was itself answered "context canceled";
// it is refused now, in words, and cancels nothing.
func TestRefusalsBesideCallInFlight(t *testing.T) {
	store := &gatedStore{Store: mem.New(), gate: make(chan struct{}), held: make(chan struct{})}
	var open sync.Once
	release := func() { open.Do(func() { close(store.gate) }) }
	t.Cleanup(release)
	s := startStdioOn(t, store, MaxInFlight)
	s.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"checkpoint","arguments":{"session":"one","state_json":"{}"}}}`)
	<-store.held
	for _, tc := range []struct {
		line, id string
		code     int
		says     string
	}{
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[1]}`, "null", -32602, "want a JSON object"},
		{`{"jsonrpc":"2.0","id":5,"method":"notifications/cancelled","params":{"requestId":5}}`, "null", -32600, `"notifications/cancelled" is a notification, which has no id`},
		{`{"jsonrpc":"2.0","id":6,"method":"notifications/cancelled","params":{"requestId":5}}`, "6", -32600, `"notifications/cancelled" is a notification, which has no id`},
		{`{"jsonrpc":"2.0","id":7,"method":"notifications/initialized"}`, "7", -32600, `"notifications/initialized" is a notification`},
	} {
		s.send(tc.line)
		r := s.next()
		if string(r.ID) != tc.id || r.Error == nil || r.Error.Code != tc.code || !strings.Contains(r.Error.Message, tc.says) {
			t.Errorf("%s: answered %s, want error %d with id %s saying %q", tc.line, strings.TrimSpace(r.raw), tc.code, tc.id, tc.says)
		}
	}
	release()
	if r := s.next(); string(r.ID) != "5" || r.Error != nil || strings.Contains(string(r.Result), `"isError":true`) {
		t.Fatalf("the call in flight: %s, want its checkpoint's answer", r.raw)
	}
	s.send(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	if r := s.next(); string(r.ID) != "5" || r.Error != nil {
		t.Fatalf("ping under the id once answered: %s", r.raw)
	}
}

// TestMessagesInTheirWords: lines that are JSON but no JSON-RPC message
// were all answered "want a JSON-RPC 2.0 message" whatever was wrong, and
// a malformed response (its id one of the server's own requests, not the
// client's) was answered with that id, which the client matches to its
// own request of that id. Each says what is wrong now, and an answer to
// a malformed response carries the id null.
func TestMessagesInTheirWords(t *testing.T) {
	s := startStdio(t)
	for _, tc := range []struct {
		line, id string
		says     string
	}{
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, "null", "id true: want a string or an integer"},
		{`{"jsonrpc":"2.0","method":"notifications/initialized","id":{"a":1}}`, "null", `id {"a":1}: want a string or an integer`},
		{`{"jsonrpc":"1.0","id":1,"method":"ping"}`, "1", `"jsonrpc": want "2.0", not "1.0"`},
		{`{"id":2,"method":"ping"}`, "2", `"jsonrpc": want "2.0", not none`},
		{`{"jsonrpc":"2.0","id":3,"method":null}`, "3", "method: want the method's name, a string, not null"},
		{`{"jsonrpc":"2.0","id":"x","error":5}`, "null", `invalid response: the answer to id "x"`},
		{`{"jsonrpc":"2.0","id":4,"result":{},"error":{"code":1,"message":"x"}}`, "null", `has both a "result" and an "error"`},
	} {
		s.send(tc.line)
		r := s.next()
		if string(r.ID) != tc.id || r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, tc.says) {
			t.Errorf("%s: answered %s, want error -32600 with id %s saying %q", tc.line, strings.TrimSpace(r.raw), tc.id, tc.says)
		}
	}
	s.send(`{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	if r := s.next(); string(r.ID) != "8" || r.Error != nil {
		t.Fatalf("ping after the bad lines: %s", r.raw)
	}
}

// TestReusedIDUnreadBounded: a client that sends request after request
// under the id of a call still running, and reads none of the refusals,
// is refused each time; the refusals wait for the client, and the
// transport stops taking its lines (those read ahead aside) rather than
// hold refusals without bound. Once it reads, every line is answered: a
// refusal with the id null for each, and the call its answer, with its
// id.
func TestReusedIDUnreadBounded(t *testing.T) {
	store := &gatedStore{Store: mem.New(), gate: make(chan struct{}), held: make(chan struct{})}
	var open sync.Once
	release := func() { open.Do(func() { close(store.gate) }) }
	t.Cleanup(release)
	s := startStdioOn(t, store, MaxInFlight)
	s.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"checkpoint","arguments":{"session":"one","state_json":"{}"}}}`)
	<-store.held
	const pad = 16 << 10
	const ahead = (readAhead + 64<<10) / pad
	const lines = 10 * (ahead + 4)
	var sent atomic.Int64
	all := make(chan struct{})
	go func() {
		defer close(all)
		for range lines {
			if _, err := fmt.Fprintf(s.in, `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":{"pad":"%s"}}}`+"\n", strings.Repeat("p", pad)); err != nil {
				return
			}
			sent.Add(1)
		}
	}()
	select {
	case <-all:
		t.Fatalf("all %d lines were taken while none of their refusals was read", lines)
	case <-time.After(2 * time.Second):
	}
	if n := sent.Load(); n > ahead+4 {
		t.Fatalf("%d lines were taken while none of their refusals was read; want at most about %d", n, ahead)
	}
	// Once the call's answer is out, its id is free again: the pings
	// after it are answered as pings.
	checkpoints := 0
	for i := range lines + 1 {
		r := s.next()
		switch {
		case r.Error != nil && string(r.ID) == "null" && strings.Contains(r.Error.Message, "id 5 is the id of a request still being answered"):
		case r.Error == nil && string(r.ID) == "5" && strings.Contains(string(r.Result), `"session":"one"`):
			checkpoints++
		case r.Error == nil && string(r.ID) == "5" && string(r.Result) == "{}" && checkpoints == 1:
		default:
			t.Fatalf("answer %d: %s, want a refusal with the id null, the call's answer, or after it a ping's", i+1, r.raw)
		}
		if i == 0 {
			release() // the call ends while the refusals wait for the client
		}
	}
	<-all
	if checkpoints != 1 {
		t.Fatalf("the call was answered %d times, want once", checkpoints)
	}
}
