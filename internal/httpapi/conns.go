package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
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
	max  int
	busy []byte // the 503 a connection past max gets

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
	since time.Time // when it entered state
	once  sync.Once
}

func newConns(max int) *conns {
	body, _ := json.Marshal(errorBody{Code: "busy", Error: fmt.Sprintf(
		"the server is at its limit of %d open connections, each at work on a request; retry shortly", max)})
	body = append(body, '\n')
	busy := fmt.Appendf(nil, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nCache-Control: no-store\r\nRetry-After: %s\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
		retryAfter, len(body), body)
	return &conns{max: max, busy: busy, open: map[*conn]struct{}{}}
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
