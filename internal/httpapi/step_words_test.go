package httpapi

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/manifest"
)

// TestStepNotFoundSaysWhy: a step that is not there is a 404 that says
// why, as the Go API does: above the head, a removed session. It used to
// be one message for every case.
func TestStepNotFoundSaysWhy(t *testing.T) {
	c, _ := newChecker(t, Options{})
	for i := range 4 {
		c.do("POST", "/v1/sessions/p/steps", `{"state":{"n":`+string(rune('0'+i))+`}}`, 201)
	}
	c.do("POST", "/v1/sessions/p/fork", `{"to":"f","step":2}`, 201)
	c.do("DELETE", "/v1/sessions/p", "", 200)
	for _, tc := range []struct{ path, want string }{
		{"/v1/sessions/f/steps/9", "head is step 2"},
		{"/v1/sessions/p/steps/1", "the session was removed"},
	} {
		got := c.do("GET", tc.path, "", 404)
		if msg, _ := got["error"].(string); !strings.Contains(msg, tc.want) || strings.Contains(msg, "steps/") {
			t.Errorf("GET %s: error %q, want it to say %q", tc.path, msg, tc.want)
		}
	}
}

// TestLostStepSaidOnce: a step of the history whose object the store
// lost is a 404 that says so in words; it said "step p@2: read session
// p, step 2: not found", as the Go API said it twice.
func TestLostStepSaidOnce(t *testing.T) {
	store := memStore()
	srv := httptest.NewServer(New(cairn.OpenStore(store), Options{}))
	t.Cleanup(srv.Close)
	c := &checker{t: t, spec: loadSpec(t), base: srv.URL, covered: map[string]bool{}}
	for i := range 3 {
		c.do("POST", "/v1/sessions/p/steps", `{"state":{"n":`+string(rune('0'+i))+`}}`, 201)
	}
	if err := store.Delete(context.Background(), manifest.StepKey("p", 2)); err != nil {
		t.Fatal(err)
	}
	// A fresh server: the first one holds step 2 in its cache.
	srv2 := httptest.NewServer(New(cairn.OpenStore(store), Options{}))
	t.Cleanup(srv2.Close)
	c.base = srv2.URL
	got := c.do("GET", "/v1/sessions/p/steps/2", "", 404)
	if msg, _ := got["error"].(string); msg != "step p@2: the store has lost it (cairn verify lists what is missing)" {
		t.Errorf("GET a lost step: error %q", msg)
	}
}
