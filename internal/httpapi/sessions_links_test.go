package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/fixture"
)

// TestListSessionsBesideLinks: on a local store, GET /v1/sessions left out
// a session whose marker is a symbolic link, without a word, and answered
// 500, listing nothing, for a link where a session's first step belongs.
// It now lists the first, and names the second in "unreadable" beside the
// others, as it does a corrupt session.
func TestListSessionsBesideLinks(t *testing.T) {
	ctx := context.Background()
	dir := fixture.LinkedSessionsStore(t)
	ws2, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws2.Close()
	ts := httptest.NewServer(New(ws2, Options{}))
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/v1/sessions")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var list struct {
		Sessions   []struct{ Session string }
		Unreadable []struct{ Session, Error string }
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &list) != nil {
		t.Fatalf("GET /v1/sessions: %s %s; want 200 listing the readable sessions", resp.Status, body)
	}
	var listed []string
	for _, s := range list.Sessions {
		listed = append(listed, s.Session)
	}
	if got, want := strings.Join(listed, " "), "a b d"; got != want {
		t.Errorf("GET /v1/sessions listed %q; want %q", got, want)
	}
	if u := list.Unreadable; len(u) != 1 || u[0].Session != "c" || !strings.Contains(u[0].Error, "holds a link where step c@1 belongs") || strings.Contains(u[0].Error, "steps/") {
		t.Errorf("GET /v1/sessions: unreadable = %+v; want session c, the link in words", u)
	}
	c := &checker{t: t, spec: loadSpec(t), base: ts.URL, covered: map[string]bool{}}
	c.do("GET", "/v1/sessions", "", 200)
}
