package httpapi

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestWaitOnRemovedSession: a long-poll on a removed session answers 404
// saying it was removed, at once if it already was and soon after if it
// is removed during the wait, as cairn run --wait ends saying so. It
// answered 204 at every timeout, so a client waiting for the reply to a
// question (the Python client's wait_for_reply) polled for ever.
func TestWaitOnRemovedSession(t *testing.T) {
	c, srv := newChecker(t, Options{PollInterval: 20 * time.Millisecond})
	c.do("POST", "/v1/sessions/q/steps", `{"state":{"n":1},"status":"awaiting_input","record":{"question":"go?"}}`, 201)
	c.do("POST", "/v1/sessions/r/steps", `{"state":{"n":1},"status":"awaiting_input","record":{"question":"go?"}}`, 201)
	c.do("DELETE", "/v1/sessions/q", "", 200)

	start := time.Now()
	got := c.do("GET", "/v1/sessions/q/wait?after=1&timeout=5", "", 404)
	if d := time.Since(start); d > 2*time.Second || !strings.Contains(strings.ToLower(strings.Join(flat(got), " ")), "removed") {
		t.Errorf("wait on a removed session: %v after %v; want a 404 saying it was removed, at once", got, d)
	}

	// Removed during the wait, by another process (not this server).
	go func() {
		time.Sleep(200 * time.Millisecond)
		if _, err := srv.ws.Remove(context.Background(), "r"); err != nil {
			t.Error(err)
		}
	}()
	start = time.Now()
	got = c.do("GET", "/v1/sessions/r/wait?after=1&timeout=5", "", 404)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("wait on a session removed meanwhile: %v after %v; want a 404 soon after the removal", got, d)
	}
	// A name with no steps yet is still waited for: its first step may come.
	c.do("GET", "/v1/sessions/none/wait?after=0&timeout=0", "", 204)
}

// flat returns the string values of an error body.
func flat(m map[string]any) []string {
	var out []string
	for _, v := range m {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case map[string]any:
			out = append(out, flat(v)...)
		}
	}
	return out
}
