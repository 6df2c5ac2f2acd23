package httpapi

import (
	"fmt"
	"testing"
	"time"
)

// TestWaitZeroTimeoutAnswersAHeadAlreadyPast: timeout=0 (documented:
// seconds >= 0) asks "is there a step past N now?" without waiting. The
// head was read under the timeout's own context, so with timeout=0 the
// read itself was cut off and a session whose head was already past N
// answered 204, "no newer step".
func TestWaitZeroTimeoutAnswersAHeadAlreadyPast(t *testing.T) {
	c, _ := newChecker(t, Options{PollInterval: 20 * time.Millisecond})
	c.do("POST", "/v1/sessions/w/steps", `{"state":{"n":1}}`, 201)
	c.do("POST", "/v1/sessions/w/steps", `{"state":{"n":2}}`, 201)
	for _, after := range []string{"0", "1"} {
		got := c.do("GET", "/v1/sessions/w/wait?after="+after+"&timeout=0", "", 200)
		if fmt.Sprint(got["step"]) != "2" {
			t.Errorf("wait after %s, timeout 0: %v; want step 2", after, got)
		}
	}
	c.do("GET", "/v1/sessions/w/wait?after=2&timeout=0", "", 204)
	c.do("GET", "/v1/sessions/none/wait?after=0&timeout=0", "", 204)
}
