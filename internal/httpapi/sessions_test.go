package httpapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/cairnlog/cairn"
)

// get answers one request through srv's handler, without a network.
func get(srv http.Handler, path string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", path, nil)
	req.Host = "127.0.0.1"
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	return rec
}

// TestServerForgetsSessions (issue 13 item 9): asking about many distinct
// session names leaves neither the server nor the workspace holding a
// *Session for each of them.
func TestServerForgetsSessions(t *testing.T) {
	ws := cairn.OpenStore(memStore())
	srv := New(ws, Options{})
	// Sessions the workspace held before the flood of names.
	before := map[string]*cairn.Session{}
	for i := range 16 {
		name := fmt.Sprintf("first-%d", i)
		s, err := ws.Session(name)
		if err != nil {
			t.Fatal(err)
		}
		before[name] = s
		if rec := get(srv, "/v1/sessions/"+name+"/head"); rec.Code != 404 {
			t.Fatalf("head of %s: %d %s", name, rec.Code, rec.Body)
		}
	}
	const names = 5000
	for i := range names {
		for _, path := range []string{"/v1/sessions/n%d/head", "/v1/sessions/n%d/wait?after=0&timeout=0", "/v1/sessions/n%d/steps/1", "/v1/diff?a=n%d&b=first-0"} {
			if rec := get(srv, fmt.Sprintf(path, i)); rec.Code != 404 && rec.Code != 204 {
				t.Fatalf("%s: %d %s", fmt.Sprintf(path, i), rec.Code, rec.Body)
			}
		}
	}
	for name, s := range before {
		if again, _ := ws.Session(name); again == s {
			t.Fatalf("after %d distinct names the workspace still caches session %s", names, name)
		}
	}
}

// TestSessionsMemory reports what many distinct names cost the server
// (issue 13: 120k names held 51 MB before). It counts bytes, not time.
func TestSessionsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 20k sessions")
	}
	ws := cairn.OpenStore(memStore())
	srv := New(ws, Options{})
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	const names = 20000
	for i := range names {
		get(srv, fmt.Sprintf("/v1/sessions/m%d/head", i))
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	grew := int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
	t.Logf("%d distinct names: heap grew %d bytes (%d per name)", names, grew, grew/names)
	if grew > 4<<20 {
		t.Fatalf("%d distinct names grew the heap by %d bytes; want it bounded (< 4 MiB)", names, grew)
	}
	runtime.KeepAlive(srv)
}
