package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// conns bounds the connections a server keeps open. A connection that
// waits for a request (idle after one, kept alive, or silent since it
// connected) costs a file descriptor and nothing else of the server's
// bounds, so a flood of them ran the process out of descriptors, and
// then out of the files a local store opens. Past max, a new connection
// takes the place of the one waiting longest for a request, closed;
// when every one is at work on a request, the new one is answered 503
// busy and closed.
type conns struct {
	max       int
	maxHeader int    // http.Server's MaxHeaderBytes, for the words of its 431
	busy      []byte // the 503 a connection past max gets

	mu        sync.Mutex
	open      map[*conn]struct{}
	answering int // connections refused whose 503 is going out
}

// maxAnswering bounds the refused connections whose 503 is going out at
// once; past it one is closed with no answer.
const maxAnswering = 64

// conn is a connection a server keeps open, with its state.
type conn struct {
	net.Conn
	cs    *conns
	state http.ConnState
	since time.Time   // when it entered state
	heard atomic.Bool // it has sent a byte
	once  sync.Once
}

func newConns(max, maxHeader int) *conns {
	body, _ := json.Marshal(errorBody{Code: "busy", Error: fmt.Sprintf(
		"the server is at its limit of %d open connections, each at work on a request; retry shortly", max)})
	body = append(body, '\n')
	busy := fmt.Appendf(nil, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nCache-Control: no-store\r\nRetry-After: %s\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
		retryAfter, len(body), body)
	return &conns{max: max, maxHeader: maxHeader, busy: busy, open: map[*conn]struct{}{}}
}

// Close closes the connection and forgets it.
func (c *conn) Close() error {
	c.once.Do(func() {
		c.cs.mu.Lock()
		delete(c.cs.open, c)
		c.cs.mu.Unlock()
	})
	return c.Conn.Close()
}

// Read reads from the connection, noting that the client has sent
// something once it has.
func (c *conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.heard.Load() {
		c.heard.Store(true)
	}
	return n, err
}

// closeSilent closes the connections that have sent nothing since they
// connected: a stopping server has no request of theirs to finish, and
// http.Server.Shutdown would wait on each for 5 seconds before it takes
// it for idle.
func (cs *conns) closeSilent() {
	cs.mu.Lock()
	var silent []*conn
	for c := range cs.open {
		if c.state == http.StateNew && !c.heard.Load() {
			silent = append(silent, c)
		}
	}
	cs.mu.Unlock()
	for _, c := range silent {
		c.Close()
	}
}

// CloseWrite shuts down the writing side of the connection, as
// net/http does before it closes one whose client may still be sending
// (after a 431, or an answer sent before the body was read), so that
// the client reads the answer before it finds the connection closed.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// listener is a net.Listener that keeps to its conns' bound.
type listener struct {
	net.Listener
	cs *conns
}

// Accept returns the next connection, making room for it or refusing it
// (503) if the server keeps as many as it may.
func (l *listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if c := l.cs.admit(nc); c != nil {
			return c, nil
		}
	}
}

// admit returns nc as a conn kept open, having closed the connection
// waiting longest for a request if there were max open; or nil, if every
// one is at work, having answered nc 503 and closed it.
func (cs *conns) admit(nc net.Conn) *conn {
	c := &conn{Conn: nc, cs: cs, state: http.StateNew, since: time.Now()}
	cs.mu.Lock()
	var oldest *conn
	if len(cs.open) >= cs.max {
		for o := range cs.open {
			if (o.state == http.StateIdle || o.state == http.StateNew) && (oldest == nil || o.since.Before(oldest.since)) {
				oldest = o
			}
		}
		if oldest == nil {
			answer := cs.answering < maxAnswering
			if answer {
				cs.answering++
			}
			cs.mu.Unlock()
			if answer {
				go cs.refuse(nc)
			} else {
				nc.Close()
			}
			return nil
		}
		delete(cs.open, oldest)
	}
	cs.open[c] = struct{}{}
	cs.mu.Unlock()
	if oldest != nil {
		oldest.Close()
	}
	return c
}

// refuse answers nc 503 busy and closes it. It reads what the client
// sends for a moment first, so that closing with its request unread does
// not reset the connection before the client reads the answer.
func (cs *conns) refuse(nc net.Conn) {
	defer func() {
		nc.Close()
		cs.mu.Lock()
		cs.answering--
		cs.mu.Unlock()
	}()
	_ = nc.SetDeadline(time.Now().Add(time.Second))
	if _, err := nc.Write(cs.busy); err != nil {
		return
	}
	if cw, ok := nc.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(nc, 64<<10))
}

// setState notes the state http.Server gives a connection.
func (cs *conns) setState(nc net.Conn, state http.ConnState) {
	c, ok := nc.(*conn)
	if !ok {
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if _, ok := cs.open[c]; !ok {
		return
	}
	switch state {
	case http.StateClosed, http.StateHijacked:
		delete(cs.open, c)
	default:
		c.state, c.since = state, time.Now()
	}
}

// goErrorHeaders are the headers of the answers net/http's server writes
// itself, in plain text, to a request it cannot read, before any handler
// runs (conn.serve in net/http/server.go).
const goErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// Write writes p, net/http's own plain-text answer to a request it could
// not read rewritten in the API's error shape (see apiAnswer).
func (c *conn) Write(p []byte) (int, error) {
	if a := c.cs.apiAnswer(p); a != nil {
		if _, err := c.Conn.Write(a); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// apiAnswer returns p, if it is one of the answers net/http's server
// writes itself to a request it cannot read (a head over MaxHeaderBytes:
// 431; a head it cannot parse, two Content-Length headers, no Host: 400;
// a transfer coding it does not know: 501; an Expect it does not meet:
// 417), as the same answer in the API's error shape; else nil. It writes
// each of those with one Write on the connection, and no answer of a
// handler can be taken for one: their headers differ (a handler's answer
// has a Date, and sorts Connection before Content-Type), and a JSON body
// holds no line break a status line could follow.
func (cs *conns) apiAnswer(p []byte) []byte {
	rest, ok := bytes.CutPrefix(p, []byte("HTTP/1.1 "))
	if !ok || len(rest) < 4 {
		return nil
	}
	var status int
	var msg string
	if line, _, ok := bytes.Cut(rest, []byte(goErrorHeaders)); ok && len(line) >= 3 && !bytes.ContainsAny(line, "\r\n") {
		status, _ = strconv.Atoi(string(line[:3]))
		// "400 Bad Request: missing required Host header", the same in body.
		why, detailed := bytes.CutPrefix(line[3:], []byte(" "+http.StatusText(status)+": "))
		switch {
		case status == http.StatusRequestHeaderFieldsTooLarge:
			msg = fmt.Sprintf("request headers: over the server's limit of %d KiB together (send large data in the body)", cs.maxHeader>>10)
		case status == http.StatusHTTPVersionNotSupported:
			msg = "request: its HTTP version: the server speaks HTTP/1.1 and HTTP/1.0"
		case status == http.StatusNotImplemented:
			msg = "request: Transfer-Encoding: the server takes a body as sent or chunked, in no other coding"
		case detailed && status >= 400 && status < 600:
			msg = "request: " + string(why) // missing required Host header, unsupported protocol version…
		case status == http.StatusBadRequest:
			msg = "request: its head could not be read as HTTP/1.1 (a request line, a header line or its framing is malformed: two Content-Length headers, say)"
		default:
			return nil
		}
	} else if bytes.HasPrefix(rest, []byte("417 Expectation Failed\r\n")) && bytes.HasSuffix(rest, []byte("\r\nContent-Length: 0\r\n\r\n")) {
		status, msg = http.StatusExpectationFailed, "request: Expect: the server meets only 100-continue"
	} else {
		return nil
	}
	code := "bad_request"
	if status == http.StatusRequestHeaderFieldsTooLarge {
		code = "too_large"
	}
	body, _ := json.Marshal(errorBody{Code: code, Error: msg})
	body = append(body, '\n')
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nCache-Control: no-store\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
		status, http.StatusText(status), len(body), body)
}
