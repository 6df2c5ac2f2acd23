package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"
)

// stoppingKey keys, in a request's context, a context that ends when
// Serve begins to stop.
type stoppingKey struct{}

// stoppingDone returns the channel closed when the server serving r
// begins to stop, or nil.
func stoppingDone(r *http.Request) <-chan struct{} {
	if c, ok := r.Context().Value(stoppingKey{}).(context.Context); ok {
		return c.Done()
	}
	return nil
}

// Listen checks addr with CheckListen and listens on it.
func Listen(addr, token string) (net.Listener, error) {
	if err := CheckListen(addr, token); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, listenError{addr, err}
	}
	return ln, nil
}

// listenError is a listen that failed, said in words: the address, and
// what the system refused, without the net package's own text ("listen
// tcp ADDR: bind: ..."). It unwraps to the system's error.
type listenError struct {
	addr string
	err  error
}

func (e listenError) Error() string {
	why := e.err.Error()
	var se *os.SyscallError
	if errors.As(e.err, &se) {
		why = se.Err.Error() // the errno's words
	}
	switch {
	case errors.Is(e.err, syscall.EADDRINUSE):
		why = "address already in use: another program listens on that port (another cairn serve?): stop it, or give another port (port 0: one the system chooses)"
	case errors.Is(e.err, syscall.EADDRNOTAVAIL):
		why = "no network interface of this machine has that address (check the host: 127.0.0.1 for this machine only, 0.0.0.0 for every interface)"
	case errors.Is(e.err, syscall.EACCES):
		why = "permission denied: ports below 1024 need privileges (give a port above 1023)"
	}
	return fmt.Sprintf("cannot listen on %s: %s", e.addr, why)
}

func (e listenError) Unwrap() error { return e.err }

// maxHeaderBytes bounds a request's head.
const maxHeaderBytes = 64 << 10

// stopGrace is how long Serve gives requests in flight when it stops.
const stopGrace = 5 * time.Second

// Serve answers requests on ln until ctx ends, then stops accepting and
// gives requests in flight up to 5 seconds (long-polls end at once).
// Those still unanswered then are cut off, and Serve says how many.
// It keeps at most Options.MaxConns connections open (see conns), and
// answers in the API's error shape the requests net/http refuses
// itself (see conns.apiAnswer).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	// Requests run under base, cancelled only once the 5 s are over;
	// stopping, which long-polls watch, ends as soon as ctx does.
	stopping, stop := context.WithCancel(context.Background())
	defer stop()
	base, cancel := context.WithCancel(context.WithValue(context.Background(), stoppingKey{}, stopping))
	defer cancel()
	cs := newConns(s.opts.MaxConns, maxHeaderBytes)
	ln = &listener{Listener: ln, cs: cs}
	hs := &http.Server{
		Handler:           s,
		ConnState:         cs.setState,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    maxHeaderBytes,
		// net/http answers "OPTIONS *" itself, 200 before any handler:
		// past the token, and in no shape of the API's. The handler
		// answers it as any request (401, else 404 no_route).
		DisableGeneralOptionsHandler: true,
		BaseContext:                  func(net.Listener) context.Context { return base },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	stop() // wake long-polls; the rest finish, within the 5 s
	cs.closeSilent()
	sctx, done := context.WithTimeout(context.Background(), stopGrace)
	defer done()
	err := hs.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		// Said in words, not as the grace's "context deadline exceeded".
		n := s.inFlight.Load()
		cancel()
		_ = hs.Close()
		err = nil // only connections still sending a request's head: none begun
		if n > 0 {
			err = fmt.Errorf("stopped: %d %s still unanswered after %v %s cut off (a client still sending its body, or a request still at work: a commit among them may or may not have landed; its session's head tells)",
				n, plural(n, "request", "requests"), stopGrace, plural(n, "was", "were"))
		}
	}
	if e := <-errc; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	return err
}

// plural returns one if n is 1, else many.
func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
