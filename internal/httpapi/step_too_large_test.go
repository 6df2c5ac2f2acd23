package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStepTooLargeSaysSo: a step number past 2^64-1 was refused as
// `step "999999999999999999999": want a number >= 1`, a number that is
// >= 1, where the CLI says the number is too large. Every step number
// the API reads, in a path, a query or a body, now says so.
func TestStepTooLargeSaysSo(t *testing.T) {
	c, _ := newChecker(t, Options{})
	c.do("POST", "/v1/sessions/s/steps", `{"state":1}`, 201)
	const big = "999999999999999999999"
	for _, tc := range []struct{ method, path, body, want string }{
		{"GET", "/v1/sessions/s/steps/" + big, "", `step "` + big + `": want a number >= 1 (too large`},
		{"GET", "/v1/sessions/s/log?from=" + big, "", `from "` + big + `": want a step number >= 1 (too large`},
		{"GET", "/v1/sessions/s/wait?after=" + big, "", `after "` + big + `": want a step number (0 for any step) (too large`},
		{"GET", "/v1/diff?a=s&b=s@" + big, "", `b: bad step reference "s@` + big + `": step number ` + big + ` is too large (`},
		{"POST", "/v1/sessions/s/fork", `{"to":"t","step":` + big + `}`, "not " + big + " (too large"},
		{"POST", "/v1/sessions/s/steps", `{"state":2,"expect":` + big + `}`, "not " + big + " (too large"},
	} {
		msg, _ := c.do(tc.method, tc.path, tc.body, 400)["error"].(string)
		if !strings.Contains(msg, tc.want) || !strings.Contains(msg, "at most 18446744073709551615)") {
			t.Errorf("%s %s %s: %q, want it to say %q ... at most 18446744073709551615", tc.method, tc.path, tc.body, msg, tc.want)
		}
	}
	// A number where a string belongs is no step number, however large.
	if msg, _ := c.do("POST", "/v1/sessions/s/steps", `{"state":2,"status":`+big+`}`, 400)["error"].(string); strings.Contains(msg, "too large") {
		t.Errorf("status %s: %q, want no word of step numbers", big, msg)
	}
	c.do("GET", "/v1/sessions/t/head", "", 404) // the fork wrote nothing
	if head := c.do("GET", "/v1/sessions/s/head", "", 200); head["step"] != json.Number("1") {
		t.Errorf("head %v after a refused commit, want 1", head["step"])
	}
}
