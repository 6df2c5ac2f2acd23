package httpapi

import (
	"fmt"
	"strings"
	"testing"
)

// TestForkHistoryOverHTTP: below a fork's first step, step N of the
// fork is the step at N in its history, for every request that names a
// step by number (a step, a log from it, a diff, a fork of it), also
// once the session it was forked from is removed. The answer is the
// step as it was written (session p, its own id). Each was a 404 that
// named p@N, which after the removal nothing would read.
func TestForkHistoryOverHTTP(t *testing.T) {
	c, _ := newChecker(t, Options{})
	for i := range 5 {
		c.do("POST", "/v1/sessions/p/steps", `{"state":{"n":`+string(rune('0'+i))+`}}`, 201)
	}
	p2 := c.do("GET", "/v1/sessions/p/steps/2", "", 200)
	c.do("POST", "/v1/sessions/p/fork", `{"to":"f","step":3}`, 201)
	c.do("POST", "/v1/sessions/f/steps", `{"state":{"n":9}}`, 201)
	c.do("DELETE", "/v1/sessions/p", "", 200)

	got := c.do("GET", "/v1/sessions/f/steps/2?state=true", "", 200)
	if got["session"] != "p" || fmt.Sprint(got["step"]) != "2" || got["id"] != p2["id"] {
		t.Errorf("GET f's step 2: %v; want p@2 (id %v)", got, p2["id"])
	}
	if st, _ := got["state"].(map[string]any); st == nil || fmt.Sprint(st["n"]) != "1" {
		t.Errorf("GET f's step 2 with its state: %v; want p@2's state", got["state"])
	}
	log := c.do("GET", "/v1/sessions/f/log?from=2", "", 200)
	if steps, _ := log["steps"].([]any); len(steps) != 2 {
		t.Errorf("GET f's log from step 2: %v; want p@2 and p@1", log)
	}
	diff := c.do("GET", "/v1/diff?a=f@1&b=f@4", "", 200)
	if ch, _ := diff["changes"].([]any); len(ch) != 1 {
		t.Errorf("GET the diff of f@1 and f@4: %v; want one change", diff)
	}
	fork := c.do("POST", "/v1/sessions/f/fork", `{"to":"g","step":2}`, 201)
	if fork["session"] != "g" || fork["origin"] != "p@2" || !strings.HasPrefix(fork["parent"].(string), "p@1") {
		t.Errorf("POST a fork of f's step 2: %v; want g@2, a fork of p@2 whose parent is p@1", fork)
	}
	got = c.do("GET", "/v1/sessions/g/steps/1", "", 200)
	if got["session"] != "p" || fmt.Sprint(got["step"]) != "1" {
		t.Errorf("GET g's step 1: %v; want p@1", got)
	}
}
