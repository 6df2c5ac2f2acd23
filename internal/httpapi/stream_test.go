package httpapi

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// commitBomb commits, through ws, a JSON state whose text is copies × a
// 1 MiB string: dedup stores it in a few hundred KiB, but reading it
// materialises all of it (a dedup bomb, issue 13 item 4).
func commitBomb(t *testing.T, ws *cairn.Workspace, session string, copies int) (*cairn.Step, int) {
	t.Helper()
	chunk := `"` + strings.Repeat("abcdefghijklmnopqrstuvwxyz012345", 1<<15) + `"`
	doc := "[" + strings.Repeat(chunk+",", copies-1) + chunk + "]"
	s, err := ws.Session(session)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Commit(t.Context(), cairn.JSON([]byte(doc)), cairn.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return st, len(doc)
}

// countingWriter is a ResponseWriter that keeps only a count of the
// body, and samples the live heap at every MiB it is sent.
type countingWriter struct {
	hdr    http.Header
	status int
	n      int64
	head   bytes.Buffer // the first bytes of the body
	peak   uint64       // the largest heap seen while the body was sent
}

func (c *countingWriter) sample() {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	c.peak = max(c.peak, m.HeapAlloc)
}

func (c *countingWriter) Header() http.Header { return c.hdr }
func (c *countingWriter) WriteHeader(s int)   { c.status = s }
func (c *countingWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = 200
	}
	if c.head.Len() < 256 {
		c.head.Write(p[:min(len(p), 256)])
	}
	if c.n>>20 != (c.n+int64(len(p)))>>20 || c.n == 0 {
		c.sample()
	}
	c.n += int64(len(p))
	return len(p), nil
}

// TestStateStreamed: a state far larger than its stored bytes goes out
// to the client without the server holding it whole.
func TestStateStreamed(t *testing.T) {
	store := memStore()
	ws := cairn.OpenStore(store)
	st, size := commitBomb(t, ws, "bomb", 64)
	t.Logf("state of %d bytes stored in a step object of %d bytes", size, st.StoredBytes)
	srv := New(cairn.OpenStore(store), Options{})
	// Warm up: read the step object once.
	if rec := get(srv, "/v1/sessions/bomb/head?state=false"); rec.Code != 200 {
		t.Fatalf("head: %d %s", rec.Code, rec.Body)
	}
	var m0 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	w := &countingWriter{hdr: http.Header{}}
	req := httptest.NewRequest("GET", "/v1/sessions/bomb/head", nil)
	req.Host = "127.0.0.1"
	srv.ServeHTTP(w, req)
	grew := int64(w.peak) - int64(m0.HeapAlloc)
	t.Logf("served %d bytes; the heap grew by at most %d bytes while sending", w.n, grew)
	if w.status != 200 || w.n < int64(size) {
		t.Fatalf("head: %d, %d bytes: %s", w.status, w.n, w.head.Bytes())
	}
	if grew > int64(size)/4 {
		t.Fatalf("serving a %d-byte state grew the heap by %d bytes: the state was held whole, not streamed", size, grew)
	}
}

// TestStateOverLimit: a state beyond the server's value limit is refused
// with an error naming the limit, and the server goes on serving.
func TestStateOverLimit(t *testing.T) {
	store := memStore()
	_, size := commitBomb(t, cairn.OpenStore(store), "bomb", 8)
	ws := cairn.OpenStore(store)
	ws.SetLimits(cairn.Limits{MaxValueBytes: 100 << 10})
	c := &checker{t: t, spec: loadSpec(t), covered: map[string]bool{}}
	ts := httptest.NewServer(New(ws, Options{}))
	defer ts.Close()
	c.base = ts.URL
	c.do("POST", "/v1/sessions/small/steps", `{"state":{"a":1}}`, 201)
	for _, path := range []string{"/v1/sessions/bomb/head", "/v1/sessions/bomb/steps/1", "/v1/sessions/bomb/wait?after=0"} {
		got := c.do("GET", path, "", 422)
		if msg := got["error"].(string); got["code"] != "limit" || !strings.Contains(msg, cairn.EnvMaxValueBytes) || !strings.Contains(msg, fmt.Sprint(100<<10)) {
			t.Fatalf("GET %s over the value limit: %v", path, got)
		}
	}
	c.do("GET", "/v1/sessions/bomb/head?state=false", "", 200)
	c.do("GET", "/v1/sessions/small/head", "", 200)

	// A state whose first half is within the limit is refused the same
	// way: the whole state is checked before any of it is sent, so the
	// client gets the limit error, not a body cut off part-way (which
	// is all a limit met after the first bytes went out could give).
	ws2 := cairn.OpenStore(store)
	ws2.SetLimits(cairn.Limits{MaxValueBytes: int64(size) / 2})
	ts2 := httptest.NewServer(New(ws2, Options{}))
	defer ts2.Close()
	c.base = ts2.URL
	got := c.do("GET", "/v1/sessions/bomb/head", "", 422)
	if msg := got["error"].(string); got["code"] != "limit" || !strings.Contains(msg, cairn.EnvMaxValueBytes) || !strings.Contains(msg, fmt.Sprint(size/2)) {
		t.Fatalf("GET a state twice the value limit: %v", got)
	}
	var resp *http.Response
	var err error
	resp, err = http.Get(ts2.URL + "/v1/sessions/small/head")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the next request: %v %v", err, resp)
	}
	resp.Body.Close()
}
