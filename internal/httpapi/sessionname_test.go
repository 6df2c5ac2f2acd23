package httpapi

import (
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// rootNameRule is what the Go API says a session name may hold: the text
// after "want " in its error for a bad name.
func rootNameRule(t *testing.T) string {
	t.Helper()
	err := cairn.ValidSession(".x")
	_, rule, ok := strings.Cut(err.Error(), "want ")
	if !ok {
		t.Fatalf("ValidSession(\".x\"): %q says no rule", err)
	}
	return rule
}

// TestSessionNameRuleFromGoAPI: the HTTP API said what a session name
// may hold in its own copy of the rule's words ("1-128 of A-Z a-z 0-9 .
// _ -"), beside the Go API's ("1-128 of [A-Za-z0-9._-]"), free to drift
// apart. Every refusal of a name (a path's session, a fork's to, a list's
// prefix) now says the Go API's rule, word for word.
func TestSessionNameRuleFromGoAPI(t *testing.T) {
	rule := rootNameRule(t)
	c, _ := newChecker(t, Options{})
	c.do("POST", "/v1/sessions/s/steps", `{"state":{}}`, 201)
	for _, tc := range []struct{ method, path, body, want string }{
		{"POST", "/v1/sessions/.s/steps", `{"state":{}}`, `session ".s": want ` + rule},
		{"GET", "/v1/sessions/.s/head", "", `session ".s": want ` + rule},
		{"POST", "/v1/sessions/s/fork", `{"to":".x"}`, `to: session ".x": want ` + rule},
		{"GET", "/v1/sessions?prefix=.a", "", `prefix: ".a" is not the start of a session name: want ` + rule},
	} {
		msg := c.do(tc.method, tc.path, tc.body, 400)["error"].(string)
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%s %s %s: error %q, want %q", tc.method, tc.path, tc.body, msg, tc.want)
		}
	}
}

// TestLongSessionNameClipped: a name far past 128 characters was echoed
// whole in its 400 (a fork's "to" of 100,000 characters, a 100 KB
// message). It is shown by its first 32 characters and its length, as
// the clients show one they refuse before sending.
func TestLongSessionNameClipped(t *testing.T) {
	rule := rootNameRule(t)
	c, _ := newChecker(t, Options{})
	c.do("POST", "/v1/sessions/s/steps", `{"state":{}}`, 201)
	long := strings.Repeat("a", 100_000)
	shown := `"` + strings.Repeat("a", 32) + `…" (100000 characters)`
	for _, tc := range []struct{ method, path, body, want string }{
		{"POST", "/v1/sessions/s/fork", `{"to":"` + long + `"}`, `to: session ` + shown + `: want ` + rule},
		{"POST", "/v1/sessions/s/fork", `{"to":"` + strings.Repeat("é", 200) + `"}`, `to: session "` + strings.Repeat("é", 32) + `…" (200 characters): want ` + rule},
		{"GET", "/v1/sessions/" + strings.Repeat("b", 1000) + "/head", "", `session "` + strings.Repeat("b", 32) + `…" (1000 characters): want ` + rule},
		{"GET", "/v1/sessions?prefix=" + strings.Repeat("c", 1000), "", `prefix: "` + strings.Repeat("c", 32) + `…" (1000 characters) is not the start`},
		{"GET", "/v1/sessions/" + strings.Repeat("b", 129) + "/head", "", `session "` + strings.Repeat("b", 32) + `…" (129 characters): want ` + rule},
	} {
		msg := c.do(tc.method, tc.path, tc.body, 400)["error"].(string)
		if !strings.Contains(msg, tc.want) || len(msg) > 300 {
			t.Errorf("%s %.60s: error %q, want %q", tc.method, tc.path, msg, tc.want)
		}
	}
}
