package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
)

// spec is openapi.json, decoded with numbers kept as json.Number.
type spec map[string]any

func loadSpec(t *testing.T) spec {
	t.Helper()
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var s spec
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if s["openapi"] != "3.1.0" {
		t.Fatalf("openapi.json: version %v", s["openapi"])
	}
	return s
}

func (s spec) paths() map[string]any { return s["paths"].(map[string]any) }

// operation returns the operation for method and a concrete request path,
// and the path template it matched.
func (s spec) operation(method, path string) (map[string]any, string) {
	segs := strings.Split(path, "/")
	for tmpl, item := range s.paths() {
		ts := strings.Split(tmpl, "/")
		if len(ts) != len(segs) {
			continue
		}
		ok := true
		for i := range ts {
			if !strings.HasPrefix(ts[i], "{") && ts[i] != segs[i] {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		if op, ok := item.(map[string]any)[strings.ToLower(method)].(map[string]any); ok {
			return op, tmpl
		}
	}
	return nil, ""
}

// resolve follows a local $ref.
func (s spec) resolve(node map[string]any) map[string]any {
	for {
		ref, ok := node["$ref"].(string)
		if !ok {
			return node
		}
		var cur any = map[string]any(s)
		for _, p := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cur = cur.(map[string]any)[p]
		}
		node = cur.(map[string]any)
	}
}

// validate checks v against the subset of JSON Schema the spec uses:
// $ref, type (one or a list), required, properties,
// additionalProperties: false, items, enum, minimum, maximum.
func (s spec) validate(schema map[string]any, v any, at string) error {
	schema = s.resolve(schema)
	if t, ok := schema["type"]; ok {
		var types []string
		switch t := t.(type) {
		case string:
			types = []string{t}
		case []any:
			for _, x := range t {
				types = append(types, x.(string))
			}
		}
		if !slices.ContainsFunc(types, func(typ string) bool { return hasType(v, typ) }) {
			return fmt.Errorf("%s: %v (%T) is not of type %v", at, v, v, types)
		}
	}
	if enum, ok := schema["enum"].([]any); ok && !slices.Contains(enum, v) {
		return fmt.Errorf("%s: %v is not one of %v", at, v, enum)
	}
	if n, ok := v.(json.Number); ok {
		f, _ := n.Float64()
		if m, ok := schema["minimum"].(json.Number); ok {
			if mf, _ := m.Float64(); f < mf {
				return fmt.Errorf("%s: %v below minimum %v", at, n, m)
			}
		}
		if m, ok := schema["maximum"].(json.Number); ok {
			if mf, _ := m.Float64(); f > mf {
				return fmt.Errorf("%s: %v above maximum %v", at, n, m)
			}
		}
	}
	if obj, ok := v.(map[string]any); ok {
		props, _ := schema["properties"].(map[string]any)
		if req, ok := schema["required"].([]any); ok {
			for _, k := range req {
				if _, ok := obj[k.(string)]; !ok {
					return fmt.Errorf("%s: required %q missing", at, k)
				}
			}
		}
		for k, val := range obj {
			p, ok := props[k].(map[string]any)
			if !ok {
				if schema["additionalProperties"] == false {
					return fmt.Errorf("%s: property %q not in the schema", at, k)
				}
				continue
			}
			if err := s.validate(p, val, at+"/"+k); err != nil {
				return err
			}
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := schema["items"].(map[string]any); ok {
			for i, x := range arr {
				if err := s.validate(items, x, at+"/"+strconv.Itoa(i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func hasType(v any, typ string) bool {
	switch typ {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := n.Int64()
		return err == nil
	}
	return false
}

// checker sends requests and checks every answer against the spec.
type checker struct {
	t       *testing.T
	spec    spec
	base    string
	token   string
	mu      sync.Mutex
	covered map[string]bool // "METHOD template" answered with a 2xx
}

func (c *checker) do(method, path string, body string, wantStatus int) map[string]any {
	c.t.Helper()
	return c.doWith(method, path, body, nil, wantStatus)
}

// doWith sends a request with extra headers (a nil value removes a header
// the checker would send) and checks the answer against the spec.
func (c *checker) doWith(method, path, body string, hdr map[string][]string, wantStatus int) map[string]any {
	c.t.Helper()
	h := http.Header{}
	if c.token != "" {
		h.Set("Authorization", "Bearer "+c.token)
	}
	if method != "GET" {
		h.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		h.Del(k)
		for _, x := range v {
			h.Add(k, x)
		}
	}
	status, b, _ := c.send(method, path, body, h, "")
	if status != wantStatus {
		c.t.Fatalf("%s %s %v: status %d, want %d; body %s", method, path, hdr, status, wantStatus, b)
	}
	return c.check(method, path, status, b)
}

// check checks an answer against the spec and returns its JSON body.
func (c *checker) check(method, path string, status int, b []byte) map[string]any {
	c.t.Helper()
	op, tmpl := c.spec.operation(method, strings.SplitN(path, "?", 2)[0])
	if op == nil {
		// No route (404), or a route's path under another method (405).
		if status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
			c.t.Fatalf("%s %s: answered %d but the spec has no such operation", method, path, status)
		}
		c.checkError(b)
		var v any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			c.t.Fatalf("%s %s: body %q is not JSON: %v", method, path, b, err)
		}
		schema := c.spec["components"].(map[string]any)["schemas"].(map[string]any)["Error"].(map[string]any)
		if err := c.spec.validate(schema, v, "body"); err != nil {
			c.t.Fatalf("%s %s (%d): error does not match openapi.json's Error: %v\n%s", method, path, status, err, b)
		}
		return nil
	}
	resp, ok := op["responses"].(map[string]any)[strconv.Itoa(status)].(map[string]any)
	if !ok {
		c.t.Fatalf("%s %s: status %d is not described in openapi.json for %s %s", method, path, status, method, tmpl)
	}
	resp = c.spec.resolve(resp)
	var v any
	if content, ok := resp["content"].(map[string]any); ok {
		schema := content["application/json"].(map[string]any)["schema"].(map[string]any)
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			c.t.Fatalf("%s %s: body %q is not JSON: %v", method, path, b, err)
		}
		if err := c.spec.validate(schema, v, "body"); err != nil {
			c.t.Fatalf("%s %s (%d): response does not match openapi.json: %v\n%s", method, path, status, err, b)
		}
	} else if len(b) != 0 {
		c.t.Fatalf("%s %s: status %d has a body the spec does not describe: %q", method, path, status, b)
	}
	if status/100 == 2 {
		c.mu.Lock()
		c.covered[method+" "+tmpl] = true
		c.mu.Unlock()
	}
	m, _ := v.(map[string]any)
	return m
}

func (c *checker) checkError(b []byte) {
	c.t.Helper()
	var e struct{ Code, Error string }
	if err := json.Unmarshal(b, &e); err != nil || e.Code == "" || e.Error == "" {
		c.t.Fatalf("error body %q is not {code, error}", b)
	}
}

func (c *checker) raw(method, path, body, token, host string) (int, []byte) {
	c.t.Helper()
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	if method != "GET" {
		h.Set("Content-Type", "application/json")
	}
	status, b, _ := c.send(method, path, body, h, host)
	return status, b
}

// send sends a request with exactly the headers hdr (and Host, if set).
func (c *checker) send(method, path, body string, hdr http.Header, host string) (int, []byte, http.Header) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header = hdr
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: read the answer: %v", method, path, err)
	}
	if len(b) > 0 && resp.Header.Get("Content-Type") != "application/json" {
		c.t.Fatalf("%s %s: content type %q", method, path, resp.Header.Get("Content-Type"))
	}
	return resp.StatusCode, b, resp.Header
}

func newChecker(t *testing.T, opts Options) (*checker, *Server) {
	ws := cairn.OpenStore(memStore())
	srv := New(ws, opts)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &checker{t: t, spec: loadSpec(t), base: ts.URL, token: opts.Token, covered: map[string]bool{}}, srv
}

// TestOpenAPI drives every route through success and failure answers and
// checks each against openapi.json; it also checks that the spec and the
// server list the same routes.
func TestOpenAPI(t *testing.T) {
	c, srv := newChecker(t, Options{MaxBody: 1 << 20, PollInterval: 20 * time.Millisecond})
	served := map[string]bool{}
	for _, r := range srv.Routes() {
		served[r.Method+" "+r.Path] = true
		item, ok := c.spec.paths()[r.Path].(map[string]any)
		if !ok || item[strings.ToLower(r.Method)] == nil {
			t.Errorf("route %s %s is not described in openapi.json", r.Method, r.Path)
		}
	}
	for p, item := range c.spec.paths() {
		for m := range item.(map[string]any) {
			if !served[strings.ToUpper(m)+" "+p] {
				t.Errorf("openapi.json describes %s %s, which the server does not serve", strings.ToUpper(m), p)
			}
		}
	}

	c.do("GET", "/v1/sessions", "", 200)
	doc := `{"b":1.50,"a":[1,2,{"x":"<\u00e9>"}],"big":1e400}`
	st := c.do("POST", "/v1/sessions/s1/steps", `{"state":`+doc+`,"record":{"n":1},"expect":0}`, 201)
	if st["step"] != json.Number("1") || st["parent"] != nil {
		t.Fatalf("first commit = %v", st)
	}
	conflict := c.do("POST", "/v1/sessions/s1/steps", `{"state":{},"expect":0}`, 409)
	if conflict["code"] != "conflict" || conflict["head"] != json.Number("1") {
		t.Fatalf("conflict body = %v", conflict)
	}
	c.do("POST", "/v1/sessions/s1/steps", `{"state":{}`, 400)
	c.do("POST", "/v1/sessions/s1/steps", `{"state":{},"colour":1}`, 400)
	c.do("POST", "/v1/sessions/s1/steps", `{"record":{}}`, 400)
	c.do("POST", "/v1/sessions/s1/steps", `{"state":{},"status":"paused"}`, 400)
	c.do("POST", "/v1/sessions/s1/steps", `{"state":{"x":"`+strings.Repeat("a", 1<<20)+`"}}`, 413)
	c.do("POST", "/v1/sessions/bad!name/steps", `{"state":{}}`, 400)

	// The state comes back byte for byte, without HTML escaping.
	status, b := c.raw("GET", "/v1/sessions/s1/head", "", "", "")
	var head struct{ State json.RawMessage }
	if json.Unmarshal(b, &head); status != 200 || string(head.State) != doc {
		t.Fatalf("head state = %d %s", status, head.State)
	}
	c.do("GET", "/v1/sessions/s1/head", "", 200)
	if got := c.do("GET", "/v1/sessions/s1/head?state=false", "", 200); got["state"] != nil {
		t.Fatalf("state=false still sent the state: %v", got)
	}
	c.do("GET", "/v1/sessions/nope/head", "", 404)
	c.do("GET", "/v1/sessions/s1/steps/1", "", 200)
	c.do("GET", "/v1/sessions/s1/steps/9", "", 404)
	c.do("GET", "/v1/sessions/s1/steps/x", "", 400)

	c.do("GET", "/v1/sessions/s1/wait?after=1&timeout=0.1", "", 204)
	c.do("GET", "/v1/sessions/s1/wait?after=0", "", 200)
	c.do("GET", "/v1/sessions/s1/wait", "", 400)
	c.do("GET", "/v1/sessions/s1/wait?after=1&timeout=NaN", "", 400)
	c.do("GET", "/v1/sessions/s1/wait?after=1&timeout=-1", "", 400)
	// A waiter is woken by a commit through the server.
	woke := make(chan map[string]any)
	go func() { woke <- c.do("GET", "/v1/sessions/s1/wait?after=1&timeout=20", "", 200) }()
	time.Sleep(50 * time.Millisecond)
	c.do("POST", "/v1/sessions/s1/steps", `{"state":{"b":2,"a":[1,2]},"record":{"n":2},"expect":1}`, 201)
	if got := <-woke; got["step"] != json.Number("2") || got["state"] == nil {
		t.Fatalf("woken waiter got %v", got)
	}

	if got := c.do("GET", "/v1/sessions/s1/log", "", 200); len(got["steps"].([]any)) != 2 {
		t.Fatalf("log = %v", got)
	}
	if got := c.do("GET", "/v1/sessions/s1/log?limit=1&from=1", "", 200); len(got["steps"].([]any)) != 1 {
		t.Fatalf("log limit=1 = %v", got)
	}
	c.do("GET", "/v1/sessions/s1/log?limit=0", "", 400)
	c.do("GET", "/v1/sessions/none/log", "", 404)

	if got := c.do("POST", "/v1/sessions/s1/fork", `{"to":"s2","step":1}`, 201); got["origin"] != "s1@1" {
		t.Fatalf("fork = %v", got)
	}
	c.do("POST", "/v1/sessions/s1/fork", `{"to":"s2"}`, 409)
	c.do("POST", "/v1/sessions/s1/fork", `{"to":"../x"}`, 400)
	c.do("POST", "/v1/sessions/none/fork", `{"to":"s3"}`, 404)

	d := c.do("GET", "/v1/diff?a=s1@1&b=s1", "", 200)
	if len(d["changes"].([]any)) == 0 {
		t.Fatalf("diff = %v", d)
	}
	c.do("GET", "/v1/diff?a=s1@1", "", 400)
	c.do("GET", "/v1/diff?a=s1@1&b=none", "", 404)

	// Human in the loop.
	c.do("POST", "/v1/sessions/s1/reply", `{"input":"yes"}`, 409) // nobody asked
	c.do("POST", "/v1/sessions/s1/steps", `{"state":{"b":2},"record":{"question":"ship it?"},"status":"awaiting_input"}`, 201)
	in := c.do("GET", "/v1/inbox", "", 200)
	if p := in["pending"].([]any); len(p) != 1 || p[0].(map[string]any)["question"] != "ship it?" {
		t.Fatalf("inbox = %v", in)
	}
	c.do("POST", "/v1/sessions/s1/reply", `{}`, 400)
	r := c.do("POST", "/v1/sessions/s1/reply", `{"input":{"approved":true}}`, 201)
	if rec := r["record"].(map[string]any); rec["in_reply_to"] != json.Number("3") || r["status"] != "running" {
		t.Fatalf("reply step = %v", r)
	}
	c.do("POST", "/v1/sessions/s1/reply", `{"input":"again"}`, 409)
	if in := c.do("GET", "/v1/inbox", "", 200); len(in["pending"].([]any)) != 0 {
		t.Fatalf("inbox after the reply = %v", in)
	}
	c.do("GET", "/v1/sessions", "", 200)
	c.do("GET", "/v1/nothing", "", 404)

	// A prefix selects sessions by name; removing one leaves its fork.
	if got := c.do("GET", "/v1/sessions?prefix=s2", "", 200); len(got["sessions"].([]any)) != 1 {
		t.Fatalf("sessions with prefix s2 = %v", got)
	}
	c.do("GET", "/v1/sessions?prefix=../", "", 400)
	if got := c.do("DELETE", "/v1/sessions/s1", "", 200); got["session"] != "s1" || got["head"] != json.Number("4") || got["steps"] != json.Number("4") {
		t.Fatalf("remove = %v", got)
	}
	c.do("GET", "/v1/sessions/s1/head", "", 404)
	c.do("DELETE", "/v1/sessions/s1", "", 404)
	c.do("DELETE", "/v1/sessions/bad!name", "", 400)
	c.do("GET", "/v1/sessions/s2/head", "", 200)
	c.do("DELETE", "/v1/sessions/s1/head", "", 405) // a route's path, another method

	for _, r := range srv.Routes() {
		if !c.covered[r.Method+" "+r.Path] {
			t.Errorf("route %s %s was never answered with success in this test", r.Method, r.Path)
		}
	}
}
