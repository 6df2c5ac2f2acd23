package httpapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
)

// rawRequest sends req as written on a new connection and returns the
// answer's status and body, and how long the answer took.
func rawRequest(t *testing.T, addr, req string) (int, string, time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second)) // a guard, not a measurement
	start := time.Now()
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to %q: %v", req[:min(len(req), 80)], err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), time.Since(start)
}

// TestDeclaredOversizeBodyRefusedAtOnce: a request whose Content-Length
// is over MaxBody was read up to the limit (or, if the body never came,
// waited for until BodyTimeout) before its 413. It gets the 413 at once
// now, without a byte of the body read.
func TestDeclaredOversizeBodyRefusedAtOnce(t *testing.T) {
	ws := cairn.OpenStore(memStore())
	ts := httptest.NewServer(New(ws, Options{MaxBody: 1 << 10, BodyTimeout: 20 * time.Second}))
	t.Cleanup(ts.Close)
	status, body, took := rawRequest(t, ts.Listener.Addr().String(),
		"POST /v1/sessions/big/steps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 99999999999\r\n\r\n{\"state\":")
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(body, "1024 bytes") {
		t.Fatalf("declared 99999999999 bytes: %d %s, want 413 naming the limit", status, body)
	}
	if took > 10*time.Second {
		t.Fatalf("the 413 took %v: the server waited for a body it would refuse", took)
	}
}

// TestBodiesBoundedTogether: MaxBody bounded each request body, but any
// number of them were committed at once, and a commit holds several
// times its body in memory while it builds the step (12 commits of
// 30 MiB at once took a server to 1 GB). Bodies being acted on are
// bounded together now: with the default MaxBodies (= MaxBody), a second
// body that does not fit beside one being committed waits until that
// commit is done. A body still arriving holds what it has sent: a client
// that trickles its body delays no one but itself.
func TestBodiesBoundedTogether(t *testing.T) {
	store := newHeldPuts("", true)
	ws := cairn.OpenStore(store)
	ts := httptest.NewServer(New(ws, Options{MaxBody: 1 << 10, BodyTimeout: 5 * time.Second}))
	t.Cleanup(ts.Close)
	release := store.release
	t.Cleanup(release) // before ts.Close, which waits for the held commit
	addr := ts.Listener.Addr().String()
	body := `{"state":"` + strings.Repeat("x", 600) + `"}`
	head := func(session string) string {
		return fmt.Sprintf("POST /v1/sessions/%s/steps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", session, len(body))
	}
	// A trickler: its body never arrives in full while the others run.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, head("trickle")+body[:100])
	// The first commit is held in the store, with its 612 bytes.
	first := make(chan int, 1)
	go func() {
		status, _, _ := rawRequest(t, addr, head("first")+body)
		first <- status
	}()
	<-store.held
	second := make(chan int, 1)
	go func() {
		status, _, _ := rawRequest(t, addr, head("second")+body)
		second <- status
	}()
	select {
	case status := <-second:
		t.Fatalf("a second body of %d bytes was committed (%d) while one of %d was, with %d bytes allowed at once", len(body), status, len(body), 1<<10)
	case <-time.After(500 * time.Millisecond):
	}
	release()
	if got := <-first; got != http.StatusCreated {
		t.Fatalf("first: %d", got)
	}
	if got := <-second; got != http.StatusCreated {
		t.Fatalf("second: %d", got)
	}
}

// heldPuts holds the Puts of keys under prefix ("": every key; only
// the first if first is set) until release is called or the Put's
// context ends, and closes held when the first is held.
type heldPuts struct {
	cas.Store
	prefix       string
	first        bool
	once, opened sync.Once
	held, gate   chan struct{}
}

func newHeldPuts(prefix string, first bool) *heldPuts {
	return &heldPuts{Store: memStore(), prefix: prefix, first: first, held: make(chan struct{}), gate: make(chan struct{})}
}

func (s *heldPuts) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	if strings.HasPrefix(key, s.prefix) {
		first := false
		s.once.Do(func() { first = true; close(s.held) })
		if first || !s.first {
			select {
			case <-s.gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return s.Store.Put(ctx, key, data, opts)
}

// release lets every Put held, and every later one, through.
func (s *heldPuts) release() { s.opened.Do(func() { close(s.gate) }) }

// TestBodyBudgetWaitsInOrder: the byte budget grants in arrival order,
// gives up after its wait with a 503, and hands back what it took.
func TestBodyBudgetWaitsInOrder(t *testing.T) {
	b := newBudget(10)
	ctx := context.Background()
	if err := b.acquire(ctx, 8, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	err := b.acquire(ctx, 5, 20*time.Millisecond, nil)
	var ae *apiError
	if !errors.As(err, &ae) || ae.status != http.StatusServiceUnavailable {
		t.Fatalf("acquire over the budget: %v, want 503", err)
	}
	got := make(chan int64, 2)
	go func() { _ = b.acquire(ctx, 5, 10*time.Second, nil); got <- 5 }()
	time.Sleep(20 * time.Millisecond)
	go func() { _ = b.acquire(ctx, 1, 10*time.Second, nil); got <- 1 }()
	time.Sleep(20 * time.Millisecond)
	select {
	case n := <-got:
		t.Fatalf("a waiter of %d bytes was granted while 8 of 10 are taken and 5 wait before it", n)
	default:
	}
	b.release(8, nil)
	<-got
	<-got
	b.release(5, nil)
	b.release(1, nil)
	if b.free != 10 || b.waiters.Len() != 0 {
		t.Fatalf("after release: free %d, %d waiting; want 10, 0", b.free, b.waiters.Len())
	}
	// An oversize request takes the whole budget rather than waiting for ever.
	if err := b.acquire(ctx, 99, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	b.release(10, nil)
}

// TestDotSegmentsRefused: a path with "..", "." or empty segments was
// redirected by ServeMux (307, which keeps the method and the body) to
// another route, with an HTML body: DELETE /v1/sessions/keep/steps/..
// landed, once the client followed it, on DELETE /v1/sessions/keep and
// removed the session. Such paths are a 400 in the API's words now, and
// nothing is redirected.
func TestDotSegmentsRefused(t *testing.T) {
	c, _ := newChecker(t, Options{})
	c.do("POST", "/v1/sessions/keep/steps", `{"state":{"a":1}}`, 201)
	for _, tc := range []struct{ method, path string }{
		{"DELETE", "/v1/sessions/keep/steps/.."},
		{"POST", "/v1/sessions/../steps"},
		{"POST", "/v1/sessions/keep/fork/../steps"},
		{"GET", "/v1/sessions/./head"},
		{"GET", "/v1/sessions/keep/steps/1/.."},
		{"GET", "/v1//sessions"},
		{"GET", "/v1/sessions/keep//head"},
	} {
		body := ""
		if tc.method == "POST" {
			body = `{"state":{"b":2}}`
		}
		// http.DefaultClient follows redirects, as most clients do.
		status, b := c.raw(tc.method, tc.path, body, "", "")
		if status != http.StatusBadRequest || !strings.Contains(string(b), "'..'") {
			t.Errorf("%s %s: %d %s, want 400 saying what is wrong with the path", tc.method, tc.path, status, b)
		}
	}
	if head := c.do("GET", "/v1/sessions/keep/head", "", 200); fmt.Sprint(head["step"]) != "1" {
		t.Fatalf("after the requests above, keep's head is %v, want 1", head["step"])
	}
	// %2e%2e is a session name, and a bad one.
	if got := c.do("GET", "/v1/sessions/%2e%2e/head", "", 400); !strings.Contains(got["error"].(string), `session ".."`) {
		t.Errorf("GET /v1/sessions/%%2e%%2e/head: %v", got)
	}
}

// TestDuplicateFieldsRefused: encoding/json takes the last of two members
// of one name and matches names regardless of case, so a body with
// "state" twice, or "state" and "State", committed one of them while
// another reader of the same body (a proxy, a log, Python's json) may
// take the other. Such bodies are a 400 naming the field now, and
// nothing is committed; names inside a state are the state's own.
func TestDuplicateFieldsRefused(t *testing.T) {
	c, _ := newChecker(t, Options{})
	c.do("POST", "/v1/sessions/d/steps", `{"state":{"a":1},"status":"awaiting_input"}`, 201)
	for _, tc := range []struct{ path, body, want string }{
		{"/v1/sessions/d/steps", `{"state":{"a":2},"state":{"a":3}}`, `field "state" is given twice`},
		{"/v1/sessions/d/steps", `{"state":{"a":2},"State":{"a":3}}`, `unknown field "State"`},
		{"/v1/sessions/d/steps", `{"STATE":{"a":2}}`, `unknown field "STATE"`},
		{"/v1/sessions/d/steps", `{"state":{"a":2},"expect":1,"expect":0}`, `field "expect" is given twice`},
		{"/v1/sessions/d/steps", `{"state":{"a":2},"st\u0061te":{"a":3}}`, `field "state" is given twice`},
		{"/v1/sessions/d/fork", `{"to":"e","to":"f"}`, `field "to" is given twice`},
		{"/v1/sessions/d/reply", `{"input":"yes","input":"no"}`, `field "input" is given twice`},
	} {
		got := c.do("POST", tc.path, tc.body, 400)
		if msg := got["error"].(string); !strings.Contains(msg, tc.want) {
			t.Errorf("POST %s %s: error %q, want it to say %q", tc.path, tc.body, msg, tc.want)
		}
	}
	if head := c.do("GET", "/v1/sessions/d/head", "", 200); fmt.Sprint(head["step"]) != "1" {
		t.Fatalf("a refused body committed: head %v", head["step"])
	}
	c.do("GET", "/v1/sessions/e/head", "", 404)
	// Members of one name inside a value, and names that only look like
	// the fields, are not the body's fields.
	c.do("POST", "/v1/sessions/d2/steps", `{"record":{"state":1,"state":2},"state":{"x":{"state":[1,{"state":2}]},"s\"tate":"state"}}`, 201)
}

// TestLoneSurrogatesRefused: a \u escape of half a UTF-16 surrogate pair
// is valid JSON syntax but no Unicode text; it was stored as sent and
// served back as a string that Python's json reads into a str it cannot
// write as UTF-8, and that Go's reads as U+FFFD. Like bytes that are not
// UTF-8, it is a 400 naming the field; whole pairs and an escaped
// backslash before "ud800" are fine.
func TestLoneSurrogatesRefused(t *testing.T) {
	c, _ := newChecker(t, Options{})
	c.do("POST", "/v1/sessions/u/steps", `{"state":{"a":"ok"}}`, 201)
	for _, tc := range []struct{ path, body, field string }{
		{"/v1/sessions/u/steps", `{"state":{"a":"\ud800"}}`, "state"},
		{"/v1/sessions/u/steps", `{"state":{"a":"x\udc00y"}}`, "state"},
		{"/v1/sessions/u/steps", `{"state":{"\ud83d":1}}`, "state"},
		{"/v1/sessions/u/steps", `{"state":["\ud83d\u0041"]}`, "state"},
		{"/v1/sessions/u/steps", `{"state":["\ude00\ud83d"]}`, "state"},
		{"/v1/sessions/u/steps", `{"state":1,"record":{"n":"\uD800"}}`, "record"},
		{"/v1/sessions/u/steps", `{"patch":[{"op":"add","path":"/b","value":"\ud800"}]}`, "patch"},
		{"/v1/sessions/u/reply", `{"input":"\udfff"}`, "input"},
	} {
		if tc.field == "input" {
			c.do("POST", "/v1/sessions/u/steps", `{"state":{"a":"ok"},"status":"awaiting_input"}`, 201)
		}
		bad := c.do("POST", tc.path, tc.body, 400)
		if msg, _ := bad["error"].(string); !strings.HasPrefix(msg, tc.field+":") || !strings.Contains(msg, "surrogate") {
			t.Errorf("%s %s: error %q, want one naming %s and the surrogate", tc.path, tc.body, msg, tc.field)
		}
	}
	c.do("POST", "/v1/sessions/v/steps", `{"state":{"a":"\ud83d\ude00 \uD83D\uDE00 \\ud800 \u00e9"}}`, 201)
	got := c.do("GET", "/v1/sessions/v/head", "", 200)
	if s := got["state"].(map[string]any)["a"]; s != "😀 😀 \\ud800 é" {
		t.Fatalf("state a = %q", s)
	}
}

// TestBearerSchemeAnyCase: the name of an authentication scheme is
// case-insensitive (RFC 9110 section 11.1), but only "Bearer " was taken:
// "bearer TOKEN", as some HTTP libraries send it, got 401. A token in
// the query string is still no token.
func TestBearerSchemeAnyCase(t *testing.T) {
	c, _ := newChecker(t, Options{Token: "s3cret"})
	for _, h := range []string{"Bearer s3cret", "bearer s3cret", "BEARER s3cret", "Bearer   s3cret"} {
		status, b, _ := c.send("GET", "/v1/sessions", "", http.Header{"Authorization": {h}}, "")
		if status != http.StatusOK {
			t.Errorf("Authorization: %s: %d %s, want 200", h, status, b)
		}
	}
	for _, h := range []string{"", "Bearer", "Bearer ", "Bearers3cret", "Basic s3cret", "Bearer s3cret2", "Bearer s3cre"} {
		if status, b, _ := c.send("GET", "/v1/sessions", "", http.Header{"Authorization": {h}}, ""); status != http.StatusUnauthorized {
			t.Errorf("Authorization: %q: %d %s, want 401", h, status, b)
		}
	}
	for _, q := range []string{"?token=s3cret", "?access_token=s3cret"} {
		if status, b, _ := c.send("GET", "/v1/sessions"+q, "", http.Header{}, ""); status != http.StatusUnauthorized {
			t.Errorf("GET /v1/sessions%s: %d %s, want 401", q, status, b)
		}
	}
}

// TestDeepBodySaysDepth: a body nested 100,000 levels deep was "not valid
// JSON ... invalid character '[' exceeded max depth"; it is valid JSON,
// only too deep for the server, and the 400 says so now. Nothing commits.
func TestDeepBodySaysDepth(t *testing.T) {
	c, _ := newChecker(t, Options{})
	const n = 100000
	for _, body := range []string{
		`{"state":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`,
		`{"state":1,"record":` + strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) + `}`,
	} {
		got := c.do("POST", "/v1/sessions/deep/steps", body, 400)
		if msg := got["error"].(string); strings.Contains(msg, "not valid JSON") || !strings.Contains(msg, "deeper than") {
			t.Errorf("a body %d levels deep: error %q, want one saying it is too deep", n, msg)
		}
	}
	c.do("GET", "/v1/sessions/deep/head", "", 404)
}

// TestIdleStatesBounded: the server kept 64 idle sessions cached, and
// each keeps its head's state: 30 commits of 10 MiB to as many sessions
// took `cairn serve` from 150 MB to 630 MB, on the way to 64 of them
// (and 64 of --max-body). Idle sessions are bounded by the bytes of
// their states too now (IdleBytes, as estimated from the states last
// committed): beyond it the least recently used are forgotten.
func TestIdleStatesBounded(t *testing.T) {
	ws := cairn.OpenStore(memStore())
	srv := New(ws, Options{MaxBody: 1 << 20})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	c := &checker{t: t, spec: loadSpec(t), base: ts.URL, covered: map[string]bool{}}
	first, err := ws.Session("big-0")
	if err != nil {
		t.Fatal(err)
	}
	state := `{"state":"` + strings.Repeat("x", 600<<10) + `"}`
	for i := range 8 {
		c.do("POST", fmt.Sprintf("/v1/sessions/big-%d/steps", i), state, 201)
	}
	if again, _ := ws.Session("big-0"); again == first {
		t.Fatalf("after 8 states of 600 KiB (4.7 MiB, over the default IdleBytes of 4 × MaxBody = 4 MiB) the oldest session is still cached")
	}
	if n := srv.sessions.size(); n >= 8 {
		t.Fatalf("the table holds %d sessions", n)
	}
	// A forgotten session reads its head from the store again.
	if got := c.do("GET", "/v1/sessions/big-0/head?state=false", "", 200); fmt.Sprint(got["step"]) != "1" {
		t.Fatalf("head of big-0: %v", got)
	}
}

// TestQueryStringChecked: net/url drops the pairs of a query string it
// cannot parse without a word, so ?limit=%zz read as no limit and
// answered 100 steps; and of a parameter given twice the handlers read
// the first. Both are a 400 now.
func TestQueryStringChecked(t *testing.T) {
	c, _ := newChecker(t, Options{})
	c.do("POST", "/v1/sessions/q/steps", `{"state":1}`, 201)
	for path, want := range map[string]string{
		"/v1/sessions/q/log?limit=%zz":               `invalid URL escape "%zz"`,
		"/v1/sessions/q/log?limit=1;from=1":          "semicolon",
		"/v1/sessions/q/log?limit=1&limit=2":         "query parameter limit is given 2 times",
		"/v1/sessions/q/head?state=false&state=true": "query parameter state is given 2 times",
		"/v1/diff?a=q&b=q&a=q@1":                     "query parameter a is given 2 times",
	} {
		got := c.do("GET", path, "", 400)
		if msg := got["error"].(string); !strings.Contains(msg, want) {
			t.Errorf("GET %s: error %q, want it to say %q", path, msg, want)
		}
	}
	c.do("GET", "/v1/sessions/q/log?limit=1&from=1", "", 200)
}

// TestUnknownQueryParamsRefused: a query parameter a route does not take
// was dropped without a word, so a misspelt ?limt=5 read the whole log,
// ?State=false sent the whole state, and ?timout=1 long-polled for 30 s.
// It is a 400 naming the parameters the route takes, and each route
// takes the parameters openapi.json gives it, no other.
func TestUnknownQueryParamsRefused(t *testing.T) {
	c, srv := newChecker(t, Options{})
	c.do("POST", "/v1/sessions/q/steps", `{"state":1}`, 201)
	for path, want := range map[string]string{
		"/v1/sessions/q/log?limt=5":                             `query parameter "limt": unknown (this path takes from, limit`,
		"/v1/sessions/q/head?State=false":                       `query parameter "State": unknown (this path takes state`,
		"/v1/sessions/q/wait?after=1&timout=1":                  `query parameter "timout": unknown (this path takes after, timeout, state`,
		"/v1/sessions/q/steps/1?prefix=q":                       `query parameter "prefix": unknown (this path takes state`,
		"/v1/sessions?prefx=q":                                  `query parameter "prefx": unknown (this path takes prefix`,
		"/v1/inbox?limit=1":                                     `query parameter "limit": GET /v1/inbox takes no query parameters`,
		"/v1/diff?a=q&b=q&c=q":                                  `query parameter "c": unknown (this path takes a, b`,
		"/v1/sessions/q/log?" + strings.Repeat("x", 300) + "=1": `query parameter "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…" (300 characters): unknown`,
	} {
		got := c.do("GET", path, "", 400)
		if msg, _ := got["error"].(string); !strings.Contains(msg, want) {
			t.Errorf("GET %s: error %q, want it to say %q", path, msg, want)
		}
	}
	c.do("POST", "/v1/sessions/q/steps?expect=1", `{"state":2}`, 400)
	c.do("GET", "/v1/sessions/q/head", "", 200)

	for _, rt := range srv.Routes() {
		op, _ := c.spec.operation(rt.Method, strings.NewReplacer("{session}", "s", "{step}", "1").Replace(rt.Path))
		var documented []string
		ps, _ := op["parameters"].([]any)
		for _, p := range ps {
			if p := c.spec.resolve(p.(map[string]any)); p["in"] == "query" {
				documented = append(documented, p["name"].(string))
			}
		}
		slices.Sort(documented)
		taken := slices.Sorted(slices.Values(srv.query[rt]))
		if !slices.Equal(documented, taken) {
			t.Errorf("%s %s takes query parameters %v; openapi.json gives it %v", rt.Method, rt.Path, taken, documented)
		}
	}
}

// TestContentTypeOnce: a request with two Content-Type headers was read
// by the first, application/json, while the second said text/plain:
// another reader of the same request (a proxy, a browser's CORS rules)
// may go by the other. It is a 415 now, and nothing is committed.
func TestContentTypeOnce(t *testing.T) {
	c, _ := newChecker(t, Options{})
	got := c.doWith("POST", "/v1/sessions/ct/steps", `{"state":1}`, map[string][]string{"Content-Type": {"application/json", "text/plain"}}, 415)
	if msg := got["error"].(string); !strings.Contains(msg, "given 2 times") {
		t.Errorf("two Content-Types: error %q", msg)
	}
	c.do("GET", "/v1/sessions/ct/head", "", 404)
}
