package httpapi

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/hitl"
)

// TestCrossSiteReplyRefused: the request of issue 13 item 8, which any
// web page can send without a preflight (text/plain, a foreign Origin),
// must not answer a paused session, with a token or without one.
func TestCrossSiteReplyRefused(t *testing.T) {
	for _, token := range []string{"", "s3cret"} {
		c, srv := newChecker(t, Options{Token: token})
		c.do("POST", "/v1/sessions/S/steps", `{"state":{"plan":1},"record":{"question":"deploy?"},"status":"awaiting_input"}`, 201)
		port := strings.TrimPrefix(c.base[strings.LastIndex(c.base, ":"):], ":")

		// The exact request from the issue.
		got := c.doWith("POST", "/v1/sessions/S/reply", `{"input":{"approved":true}}`,
			map[string][]string{"Origin": {"https://evil.example"}, "Content-Type": {"text/plain"}}, 403)
		if !strings.Contains(got["error"].(string), "evil.example") {
			t.Errorf("refusal does not name the origin: %v", got)
		}
		for _, tc := range []struct {
			hdr  map[string][]string
			want int
		}{
			{map[string][]string{"Content-Type": {"text/plain"}}, 415},
			{map[string][]string{"Content-Type": nil}, 415},
			{map[string][]string{"Content-Type": {"application/x-www-form-urlencoded"}}, 415},
			{map[string][]string{"Content-Type": {"multipart/form-data; boundary=x"}}, 415},
			{map[string][]string{"Content-Type": {"application/jsonx"}}, 415},
			{map[string][]string{"Origin": {"https://evil.example"}}, 403},
			{map[string][]string{"Origin": {"null"}}, 403},
			{map[string][]string{"Origin": {"http://127.0.0.1:1"}}, 403}, // another port of this machine
			{map[string][]string{"Origin": {"http://localhost.evil.example:" + port}}, 403},
			{map[string][]string{"Sec-Fetch-Site": {"cross-site"}}, 403},
			{map[string][]string{"Sec-Fetch-Site": {"same-site"}}, 403},
		} {
			c.doWith("POST", "/v1/sessions/S/reply", `{"input":{"approved":true}}`, tc.hdr, tc.want)
			c.doWith("POST", "/v1/sessions/S/steps", `{"state":{"plan":2}}`, tc.hdr, tc.want)
			c.doWith("POST", "/v1/sessions/S/fork", `{"to":"F"}`, tc.hdr, tc.want)
		}

		// Nothing was granted, committed or forked.
		pending, err := hitl.Inbox(t.Context(), srv.ws)
		if err != nil || len(pending) != 1 || pending[0].Step != 1 {
			t.Fatalf("token %q: inbox after the refused requests = %+v, %v; want S@1 still waiting", token, pending, err)
		}
		c.do("GET", "/v1/sessions/F/head", "", 404)

		// The server's own origin, and loopback names of the same port, are fine.
		for i, origin := range []string{c.base, "http://localhost:" + port, "http://[::1]:" + port} {
			c.doWith("POST", fmt.Sprintf("/v1/sessions/ok%d/steps", i), `{"state":{}}`,
				map[string][]string{"Origin": {origin}, "Sec-Fetch-Site": {"same-origin"}, "Content-Type": {"application/json; charset=utf-8"}}, 201)
		}
		c.doWith("POST", "/v1/sessions/S/reply", `{"input":{"approved":true}}`,
			map[string][]string{"Sec-Fetch-Site": {"none"}}, 201)
	}
}
