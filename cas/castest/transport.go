package castest

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
)

// CountingTransport counts the HTTP requests that leave a client, for
// checking how many requests a store call really makes.
type CountingTransport struct {
	Next http.RoundTripper
	n    atomic.Int64
}

// NewCountingTransport counts requests sent through a fresh default transport.
func NewCountingTransport() *CountingTransport {
	return &CountingTransport{Next: http.DefaultTransport.(*http.Transport).Clone()}
}

// RoundTrip implements http.RoundTripper.
func (c *CountingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.Next.RoundTrip(r)
}

// Requests returns how many requests were sent so far.
func (c *CountingTransport) Requests() int64 { return c.n.Load() }

// LossyTransport loses some responses: the request reaches the server and
// takes effect, then the client sees a reset connection. It proves that
// retries of requests that did land (a conditional create above all) are
// answered correctly.
type LossyTransport struct {
	next  http.RoundTripper
	mu    sync.Mutex
	rnd   *rand.Rand
	rate  float64
	drops atomic.Int64
	cut   bool // lose responses by cutting the connection (EOF), not resetting it
}

// NewCuttingTransport is NewLossyTransport whose lost responses are cut
// off as a server closing its connection does: before the headers (the
// client sees io.EOF) or in the middle of the body (io.ErrUnexpectedEOF).
func NewCuttingTransport(rate float64, seed uint64) *LossyTransport {
	l := NewLossyTransport(rate, seed)
	l.cut = true
	return l
}

// NewLossyTransport loses a fraction rate of the responses of a fresh
// default transport, chosen by a generator seeded with seed.
func NewLossyTransport(rate float64, seed uint64) *LossyTransport {
	return &LossyTransport{
		next: http.DefaultTransport.(*http.Transport).Clone(),
		rnd:  rand.New(rand.NewPCG(seed, seed+1)),
		rate: rate,
	}
}

// RoundTrip implements http.RoundTripper.
func (l *LossyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(r)
	l.mu.Lock()
	drop := l.rnd.Float64() < l.rate
	l.mu.Unlock()
	if err != nil || !drop {
		return resp, err
	}
	l.drops.Add(1)
	if l.cut {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if len(body) < 2 {
			return nil, io.EOF
		}
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body[:len(body)/2]), errReader{io.ErrUnexpectedEOF}))
		return resp, nil
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// Drops returns how many responses were lost so far.
func (l *LossyTransport) Drops() int64 { return l.drops.Load() }
