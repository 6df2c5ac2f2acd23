package httpapi

import (
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestBadInputInAPIWords (issue 15 item 6): a bad request body gets a
// message naming the request's field and what it wants, never a Go type.
func TestBadInputInAPIWords(t *testing.T) {
	c, _ := newChecker(t, Options{})
	c.do("POST", "/v1/sessions/s/steps", `{"state":{}}`, 201)
	for _, tc := range []struct {
		path, body string
		want       []string
	}{
		{"/v1/sessions/s/steps", `{"state":{},"expect":1.5}`, []string{"expect: want a non-negative integer step number", "1.5"}},
		{"/v1/sessions/s/steps", `{"state":{},"expect":-1}`, []string{"expect: want a non-negative integer step number", "-1"}},
		{"/v1/sessions/s/steps", `{"state":{},"expect":"1"}`, []string{"expect: want", "a string"}},
		{"/v1/sessions/s/steps", `{"state":{},"status":7}`, []string{"status: want running, awaiting_input or done"}},
		{"/v1/sessions/s/steps", `{"state":{},"status":"paused"}`, []string{`status "paused": want running, awaiting_input or done`}},
		{"/v1/sessions/s/steps", `{"state":{},"colour":1}`, []string{`unknown field "colour"`, "state, patch, record, status, expect"}},
		{"/v1/sessions/s/steps", `[1]`, []string{"want a JSON object with state"}},
		{"/v1/sessions/s/steps", ``, []string{"request body is empty"}},
		{"/v1/sessions/s/steps", `{"state":`, []string{"not valid JSON"}},
		{"/v1/sessions/s/steps", `{"state":}`, []string{"not valid JSON at byte"}},
		{"/v1/sessions/s/steps", `{"state":{}} x`, []string{"data after the JSON object"}},
		{"/v1/sessions/s/steps", `{"record":{}}`, []string{"state is required"}},
		{"/v1/sessions/s/fork", `{"to":5}`, []string{"to: want the new session's name", "not a number"}},
		{"/v1/sessions/s/fork", `{"to":"x","step":"2"}`, []string{"step: want a step number >= 1"}},
		{"/v1/sessions/s/fork", `{"to":"x","step":0}`, []string{"step: want a step number >= 1"}},
		{"/v1/sessions/s/fork", `{"to":".x"}`, []string{`to: session ".x"`, "not starting with '.'"}},
		{"/v1/sessions/s/reply", `{"answer":1}`, []string{`unknown field "answer"`, "input"}},
		{"/v1/sessions/.s/steps", `{"state":{}}`, []string{`session ".s"`}},
	} {
		got := c.do("POST", tc.path, tc.body, 400)
		msg := got["error"].(string)
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("POST %s %s: error %q does not say %q", tc.path, tc.body, msg, w)
			}
		}
		for _, leak := range []string{"Go struct", "uint64", "commitRequest", "forkRequest", "replyRequest", "json:", "RawMessage", "invalid argument"} {
			if strings.Contains(msg, leak) {
				t.Errorf("POST %s %s: error %q names %q", tc.path, tc.body, msg, leak)
			}
		}
	}
	for _, path := range []string{"/v1/sessions/s/steps/9", "/v1/sessions/s/log?from=9"} {
		if msg := c.do("GET", path, "", 404)["error"].(string); strings.Contains(msg, "steps/") || !strings.Contains(msg, "s@9") {
			t.Errorf("GET %s: error %q, want one naming s@9 and no store key", path, msg)
		}
	}
}

// TestDiffOfKinds (issue 15 item 12): a diff of a JSON state and a
// directory state is bad input, not a server failure.
func TestDiffOfKinds(t *testing.T) {
	c, srv := newChecker(t, Options{})
	c.do("POST", "/v1/sessions/j/steps", `{"state":{"a":1}}`, 201)
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/f.txt", []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, _ := srv.ws.Session("d")
	if _, err := d.Commit(t.Context(), cairn.Dir(dir), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"a=j&b=d", "a=d@1&b=j@1"} {
		got := c.do("GET", "/v1/diff?"+q, "", 400)
		if msg := got["error"].(string); !strings.Contains(msg, "JSON state") || !strings.Contains(msg, "directory state") {
			t.Errorf("diff %s: %q", q, msg)
		}
	}
	c.do("GET", "/v1/diff?a=d&b=d@1", "", 200)
	c.do("GET", "/v1/diff?a=j@0&b=j", "", 400)
	c.do("GET", "/v1/diff?a=.j&b=j", "", 400)
}

// TestStateParam (issue 15 item 12): ?state= takes true, false, 1 or 0;
// anything else is a 400 that says so.
func TestStateParam(t *testing.T) {
	c, _ := newChecker(t, Options{})
	c.do("POST", "/v1/sessions/s/steps", `{"state":{"a":1}}`, 201)
	for _, base := range []string{"/v1/sessions/s/head", "/v1/sessions/s/steps/1", "/v1/sessions/s/wait?after=0&"} {
		sep := "?"
		if strings.HasSuffix(base, "&") {
			sep = ""
		}
		for v, want := range map[string]bool{"true": true, "1": true, "false": false, "0": false} {
			got := c.do("GET", base+sep+"state="+v, "", 200)
			if _, has := got["state"]; has != want {
				t.Errorf("GET %sstate=%s: state sent %v, want %v", base+sep, v, has, want)
			}
		}
		for _, v := range []string{"maybe", "", "TRUE", "yes", "2"} {
			msg := c.do("GET", base+sep+"state="+v, "", 400)["error"].(string)
			if !strings.Contains(msg, "want true, false, 1 or 0") {
				t.Errorf("GET %sstate=%s: %q", base+sep, v, msg)
			}
		}
	}
}

// TestSessionPattern (issue 15 item 12): the session-name pattern of
// openapi.json accepts exactly the names the server accepts.
func TestSessionPattern(t *testing.T) {
	s := loadSpec(t)
	ws := cairn.OpenStore(memStore())
	names := []string{"a", "A", "0", "_", "-", "a.b", "a..b", "a.", "x-y_z.1", ".", "..", ".a", ".hidden", "a/b", "a b", "é",
		"", strings.Repeat("a", 128), strings.Repeat("a", 129), "_" + strings.Repeat(".", 127), "-.", "a\n", "a@1"}
	patterns := 0
	check := func(where string, pattern string) {
		patterns++
		re := regexp.MustCompile(pattern)
		for _, name := range names {
			_, err := ws.Session(name)
			if re.MatchString(name) != (err == nil) {
				t.Errorf("%s: pattern %s matches %q: %v; the server accepts it: %v", where, re, name, re.MatchString(name), err == nil)
			}
		}
	}
	to := s["components"].(map[string]any)["schemas"].(map[string]any)["ForkRequest"].(map[string]any)["properties"].(map[string]any)["to"].(map[string]any)
	check("ForkRequest.to", to["pattern"].(string))
	for path, item := range s.paths() {
		for method, op := range item.(map[string]any) {
			params, _ := op.(map[string]any)["parameters"].([]any)
			for _, p := range params {
				p := p.(map[string]any)
				if p["name"] != "session" {
					continue
				}
				check(method+" "+path, p["schema"].(map[string]any)["pattern"].(string))
			}
		}
	}
	if patterns == 0 {
		t.Fatal("openapi.json has no session parameter")
	}
}

// TestEscapedSlashSegment: a session or step that is only an escaped
// slash (/v1/sessions/%2F/head, as a client that escapes the name "/"
// sends it) was answered 405 "GET ...: this path takes GET, HEAD" (ServeMux
// takes no such segment as a wildcard's value). The route answers it
// now, in its own words: 400 naming the session or step.
func TestEscapedSlashSegment(t *testing.T) {
	c, _ := newChecker(t, Options{})
	c.do("POST", "/v1/sessions/s/steps", `{"state":{}}`, 201)
	for _, tc := range []struct{ method, path, body, says string }{
		{"GET", "/v1/sessions/%2F/head", "", `session \"/\": want`},
		{"GET", "/v1/sessions/%2f/log", "", `session \"/\": want`},
		{"DELETE", "/v1/sessions/%2F", "", `session \"/\": want`},
		{"POST", "/v1/sessions/%2F/steps", `{"state":{}}`, `session \"/\": want`},
		{"GET", "/v1/sessions/s/steps/%2F", "", `step \"/\": want a number`},
	} {
		status, b, _ := c.send(tc.method, tc.path, tc.body, http.Header{"Content-Type": {"application/json"}}, "")
		if status != http.StatusBadRequest || !strings.Contains(string(b), tc.says) {
			t.Errorf("%s %s: %d %s; want 400 saying %s", tc.method, tc.path, status, b, tc.says)
		}
	}
	status, b, hdr := c.send("PUT", "/v1/sessions/%2F/steps", "", http.Header{}, "")
	if status != http.StatusMethodNotAllowed || hdr.Get("Allow") != "POST" {
		t.Errorf("PUT on an escaped-slash session's steps: %d %s (Allow %q); want 405, Allow POST", status, b, hdr.Get("Allow"))
	}
}

// TestBodyCharactersNamed: a body that is not JSON because of a character
// beyond ASCII was said in encoding/json's Latin-1 reading of its first
// byte: a body saved with a byte order mark (as Windows tools save UTF-8)
// was "invalid character 'ï' looking for beginning of value", and quotes
// pasted from a document ('“') were "invalid character 'â'". Each is
// named as what it is now.
func TestBodyCharactersNamed(t *testing.T) {
	c, _ := newChecker(t, Options{})
	for _, tc := range []struct{ body, says string }{
		{"\xef\xbb\xbf{\"state\":1}", "at byte 1: it starts with a byte order mark (U+FEFF), which JSON does not allow"},
		{"{\u201cstate\u201d:1}", "invalid character '\u201c' looking for beginning of object key string"},
		{"{\"state\":\u00e91}", "invalid character '\u00e9' looking for beginning of value"},
		{"{\"state\":\xff}", "invalid byte 0xff (not UTF-8) looking for beginning of value"},
		{"{\"state\":x}", "invalid character 'x' looking for beginning of value"},
	} {
		status, b, _ := c.send("POST", "/v1/sessions/s/steps", tc.body, http.Header{"Content-Type": {"application/json"}}, "")
		if status != http.StatusBadRequest || !strings.Contains(string(b), tc.says) {
			t.Errorf("body %q: %d %s; want 400 saying %q", tc.body, status, b, tc.says)
		}
	}
}
