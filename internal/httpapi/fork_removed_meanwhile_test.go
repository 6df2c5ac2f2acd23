package httpapi

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/fixture"
)

// TestForkRemovedMeanwhileOverHTTP: a fork whose base session is removed
// after the fork read its step and before it wrote its own (a cairn rm
// between the two) is a 404 saying the session was removed, as a read
// of that step says then, with or without gc since; never "pruned",
// which nothing was, nor the store's keys or the server's types. The
// CLI's test of it is TestForkOfRemovedSessionSaysRemoved.
func TestForkRemovedMeanwhileOverHTTP(t *testing.T) {
	store := &fixture.RemovingStore{Store: memStore()}
	ts := httptest.NewServer(New(cairn.OpenStore(store), Options{}))
	t.Cleanup(ts.Close)
	c := &checker{t: t, spec: loadSpec(t), base: ts.URL, covered: map[string]bool{}}
	for _, tc := range []struct {
		session, body, ref string
		gc                 bool
	}{
		{"a", `{"to":"fork-of-a","step":1}`, "a@1", false},
		{"b", `{"to":"fork-of-b","step":3}`, "b@3", false},
		{"c", `{"to":"fork-of-c"}`, "c@5", true}, // its head
	} {
		for range 5 {
			c.do("POST", "/v1/sessions/"+tc.session+"/steps", `{"state":{"n":1}}`, 201)
		}
		store.Arm(tc.session, tc.gc)
		got := c.do("POST", "/v1/sessions/"+tc.session+"/fork", tc.body, 404)
		if err := store.Err(); err != nil {
			t.Fatalf("rm %s beside the fork: %v", tc.session, err)
		}
		msg, _ := got["error"].(string)
		if got["code"] != "not_found" || !strings.Contains(msg, "step "+tc.ref+": the session was removed") ||
			strings.Contains(msg, "pruned") || strings.Contains(msg, "/") || strings.Contains(msg, "cairn.") {
			t.Errorf("a fork of %s as %s is removed: %v; want 404 not_found saying the session was removed, as a read of the step says", tc.ref, tc.session, got)
		}
		c.do("GET", "/v1/sessions/"+strings.Replace(tc.ref, "@", "/steps/", 1), "", 404)
		c.do("GET", "/v1/sessions/fork-of-"+tc.session+"/head", "", 404) // no fork landed
	}
}
