package timeout_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas/timeout"
)

// TestIdleRequestAborted: a server that never answers fails the request
// with a timeout.Error, a net.Error whose Timeout is true (what the
// retry wrapper retries); one that answers is untouched.
func TestIdleRequestAborted(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			<-release
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	defer close(release)
	c := &http.Client{Transport: timeout.Transport(http.DefaultTransport, 50*time.Millisecond)}
	_, err := c.Get(srv.URL + "/hang")
	var te *timeout.Error
	var ne net.Error
	if !errors.As(err, &te) || !errors.As(err, &ne) || !ne.Timeout() || !strings.Contains(err.Error(), timeout.EnvTimeout) {
		t.Fatalf("request to a hung server: %v; want a timeout.Error naming $%s", err, timeout.EnvTimeout)
	}
	resp, err := c.Get(srv.URL + "/fine")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// TestConfig: the environment sets the knobs, the URL query overrides
// them, and bad values are refused with their name.
func TestConfig(t *testing.T) {
	t.Setenv(timeout.EnvTimeout, "7s")
	t.Setenv(timeout.EnvAttempts, "2")
	c, err := timeout.FromEnv()
	if err != nil || c.Timeout != 7*time.Second || c.Attempts != 2 {
		t.Fatalf("FromEnv = %+v, %v", c, err)
	}
	if ok, err := c.Set("attempts", "9"); !ok || err != nil || c.Attempts != 9 {
		t.Fatalf("Set attempts = %v %v %+v", ok, err, c)
	}
	if ok, _ := c.Set("region", "x"); ok {
		t.Fatal("Set took a parameter that is not its own")
	}
	for _, kv := range [][2]string{{"timeout", "0s"}, {"timeout", "soon"}, {"attempts", "0"}, {"attempts", "1000"}} {
		if ok, err := c.Set(kv[0], kv[1]); !ok || err == nil || !strings.Contains(err.Error(), kv[0]) {
			t.Errorf("Set(%s=%s) = %v, %v; want an error naming it", kv[0], kv[1], ok, err)
		}
	}
	t.Setenv(timeout.EnvTimeout, "forever")
	if _, err := timeout.FromEnv(); err == nil || !strings.Contains(err.Error(), timeout.EnvTimeout) {
		t.Fatalf("FromEnv with a bad timeout: %v", err)
	}
}
