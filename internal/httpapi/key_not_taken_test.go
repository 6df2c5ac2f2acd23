package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestIdempotencyKeyWhereNoneIsTaken: a fork or a removal sent with an
// Idempotency-Key took it without a word and stored none, so the client,
// promised a safe retry, got a 409 (the fork's session exists) or a 404
// (the session is gone) when it retried one that had landed. Only
// commits and replies take a key; on a fork or a removal it is a 400
// saying so, and nothing is done.
func TestIdempotencyKeyWhereNoneIsTaken(t *testing.T) {
	ws := cairn.OpenStore(memStore())
	s, _ := ws.Session("s")
	if _, err := s.Commit(t.Context(), cairn.JSON([]byte(`{}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	srv := New(ws, Options{})
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/v1/sessions/s/fork", `{"to":"t"}`},
		{"DELETE", "/v1/sessions/s", ""},
	} {
		req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
		req.Host = "127.0.0.1"
		if tc.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Idempotency-Key", "k1")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "Idempotency-Key: only commits and replies take one") {
			t.Errorf("%s %s with an Idempotency-Key: %d %s; want 400 saying only commits and replies take one", tc.method, tc.path, rec.Code, rec.Body)
		}
	}
	for _, name := range []string{"s", "t"} {
		want := http.StatusOK
		if name == "t" {
			want = http.StatusNotFound
		}
		if rec := get(srv, "/v1/sessions/"+name+"/head?state=false"); rec.Code != want {
			t.Errorf("session %s after the refused requests: %d %s; want %d", name, rec.Code, rec.Body, want)
		}
	}
}
