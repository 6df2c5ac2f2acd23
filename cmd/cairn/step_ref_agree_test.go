package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/httpapi"
)

// TestStepRefsAgree: the CLI, the HTTP API and the MCP server each read
// the N of SESSION@N themselves; they take the same references and
// refuse the same ones. Leading zeros name the step ("s@01" is s@1,
// everywhere); a sign, a space, another base, an exponent, digits of
// another script, 0 and an empty N are refused everywhere.
func TestStepRefsAgree(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	for range 2 {
		if _, errb, code := cli(t, store, `{"n":1}`, "commit", "s", "-"); code != 0 {
			t.Fatalf("commit: %d %s", code, errb)
		}
	}
	ws, err := cairn.Open(t.Context(), store)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	api := httpapi.New(ws, httpapi.Options{})
	c, _, _ := startMCP(t, store)
	c.call("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "cairn-test", "version": "1"},
	})
	c.send(map[string]any{"method": "notifications/initialized"})

	for _, tc := range []struct {
		ref  string
		good bool
	}{
		{"s@1", true}, {"s@01", true}, {"s@002", true}, {"s", true},
		{"s@0", false}, {"s@00", false}, {"s@", false}, {"s@+1", false}, {"s@-1", false},
		{"s@ 1", false}, {"s@1 ", false}, {"s@0x1", false}, {"s@1e0", false}, {"s@1_0", false},
		{"s@١", false}, {"s@1@1", false}, {"@1", false},
	} {
		_, errb, code := cli(t, store, "", "show", tc.ref)
		cliGood := code == 0
		req := httptest.NewRequest("GET", "/v1/diff?a="+url.QueryEscape(tc.ref)+"&b=s", nil)
		req.Host = "127.0.0.1"
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		httpGood := rec.Code == http.StatusOK
		var res struct{ IsError bool }
		json.Unmarshal(c.call("tools/call", map[string]any{"name": "show", "arguments": map[string]any{"ref": tc.ref}}), &res)
		mcpGood := !res.IsError
		if cliGood != tc.good || httpGood != tc.good || mcpGood != tc.good {
			t.Errorf("%q: the CLI takes it %v (%d %s), HTTP %v (%d %s), MCP %v; want %v everywhere",
				tc.ref, cliGood, code, errb, httpGood, rec.Code, rec.Body, mcpGood, tc.good)
		}
	}
}
