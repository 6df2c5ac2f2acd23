// Package timeout bounds how long an object-store request may hang: it
// aborts a request that makes no progress (sends no byte of its body,
// receives no header or byte of the response) for a set time, with an
// error the retry wrapper treats as transient. It also reads the two
// knobs every S3 backend shares from a store URL's query and the
// environment: the timeout, and how many attempts a call gets.
//
// The timeout is an idle timeout, not a deadline: a 4 GiB transfer that
// keeps moving is never cut, while a server that stops answering (a
// SIGSTOPped MinIO, a dropped route) fails the attempt after Timeout.
package timeout

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/cairnlog/cairn/cas"
)

// Environment variables read by FromEnv; a store URL's query parameters
// timeout= and attempts= override them.
const (
	EnvTimeout  = "CAIRN_S3_TIMEOUT"
	EnvAttempts = "CAIRN_S3_ATTEMPTS"
)

// Defaults: a hung server fails a call within about
// DefaultAttempts × DefaultTimeout (75 s), plus a few seconds of backoff.
const (
	DefaultTimeout  = 15 * time.Second
	DefaultAttempts = 5
	maxAttempts     = 100
)

// Config is how long a request may stall and how many attempts a call gets.
type Config struct {
	Timeout  time.Duration
	Attempts int
}

// FromEnv returns the defaults overridden by $CAIRN_S3_TIMEOUT (a Go
// duration such as 10s) and $CAIRN_S3_ATTEMPTS (a positive integer). A
// value it cannot use is an error matching cas.ErrInvalidSetting that
// names the variable.
func FromEnv() (Config, error) {
	c := Config{Timeout: DefaultTimeout, Attempts: DefaultAttempts}
	for _, kv := range [][2]string{{"timeout", EnvTimeout}, {"attempts", EnvAttempts}} {
		if v := os.Getenv(kv[1]); v != "" {
			if _, err := c.Set(kv[0], v); err != nil {
				return Config{}, fmt.Errorf("%w: $%s=%q: %s", cas.ErrInvalidSetting, kv[1], v, want(kv[0]))
			}
		}
	}
	return c, nil
}

// Set applies the URL query parameter key=value if key is "timeout" or
// "attempts", and reports whether it was one of them.
func (c *Config) Set(key, value string) (bool, error) {
	switch key {
	case "timeout":
		d, err := time.ParseDuration(value)
		if err != nil || d <= 0 {
			return true, fmt.Errorf("timeout %q: %s", value, want(key))
		}
		c.Timeout = d
	case "attempts":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > maxAttempts {
			return true, fmt.Errorf("attempts %q: %s", value, want(key))
		}
		c.Attempts = n
	default:
		return false, nil
	}
	return true, nil
}

// want says what Set wants of key's value.
func want(key string) string {
	if key == "timeout" {
		return "want a positive duration such as 10s"
	}
	return fmt.Sprintf("want a whole number from 1 to %d", maxAttempts)
}

// Error is the error of a request aborted for making no progress. It is
// a net.Error whose Timeout is true, so the retry wrapper retries it.
type Error struct{ Idle time.Duration }

func (e *Error) Error() string {
	return fmt.Sprintf("no answer from the store for %v (set the timeout with ?timeout= or $%s)", e.Idle, EnvTimeout)
}

// Timeout reports true.
func (e *Error) Timeout() bool { return true }

// Temporary reports true.
func (e *Error) Temporary() bool { return true }

// Doer is what an HTTP client does; *http.Client is one.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Transport wraps next so that requests idle for d are aborted.
func Transport(next http.RoundTripper, d time.Duration) http.RoundTripper {
	return roundTripper{next: next, d: d}
}

// Client wraps next so that requests idle for d are aborted.
func Client(next Doer, d time.Duration) Doer { return doer{next: next, d: d} }

type roundTripper struct {
	next http.RoundTripper
	d    time.Duration
}

func (t roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	return watch(r, t.d, t.next.RoundTrip)
}

type doer struct {
	next Doer
	d    time.Duration
}

func (c doer) Do(r *http.Request) (*http.Response, error) { return watch(r, c.d, c.next.Do) }

// watchdog cancels a request once it has made no progress for d.
type watchdog struct {
	d      time.Duration
	cancel context.CancelFunc
	mu     sync.Mutex
	timer  *time.Timer
	fired  bool
}

func (w *watchdog) kick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.fired {
		w.timer.Reset(w.d)
	}
}

func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer.Stop()
}

func (w *watchdog) hasFired() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fired
}

func watch(r *http.Request, d time.Duration, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	if d <= 0 {
		return send(r)
	}
	ctx, cancel := context.WithCancel(r.Context())
	w := &watchdog{d: d, cancel: cancel}
	w.timer = time.AfterFunc(d, func() {
		w.mu.Lock()
		w.fired = true
		w.mu.Unlock()
		cancel()
	})
	r = r.Clone(ctx)
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = &progressBody{ReadCloser: r.Body, w: w}
	}
	resp, err := send(r)
	if err != nil {
		w.stop()
		cancel()
		if w.hasFired() {
			return nil, &Error{Idle: d}
		}
		return nil, err
	}
	w.kick()
	resp.Body = &watchedBody{ReadCloser: resp.Body, w: w}
	return resp, nil
}

// progressBody kicks the watchdog as the request body is sent.
type progressBody struct {
	io.ReadCloser
	w *watchdog
}

func (b *progressBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.w.kick()
	return n, err
}

// watchedBody kicks the watchdog as the response arrives and reports
// an abort as an Error.
type watchedBody struct {
	io.ReadCloser
	w *watchdog
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && b.w.hasFired() {
		return n, &Error{Idle: b.w.d}
	}
	b.w.kick()
	return n, err
}

func (b *watchedBody) Close() error {
	b.w.stop()
	b.w.cancel()
	return b.ReadCloser.Close()
}
