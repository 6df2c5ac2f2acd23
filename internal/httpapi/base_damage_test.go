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
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/castest"
	"github.com/cairnlog/cairn/manifest"
)

// serveDamagedBase serves a store whose session d has steps steps and a
// base marker holding marker, and returns the store and the server.
func serveDamagedBase(t *testing.T, steps int, marker string) (cas.Store, *httptest.Server) {
	t.Helper()
	ctx := context.Background()
	store := memStore()
	s, _ := cairn.OpenStore(store).Session("d")
	for i := 0; i < steps; i++ {
		if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"i":1}`)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Put(ctx, manifest.BaseKey("d"), []byte(marker), cas.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(New(cairn.OpenStore(store), Options{}))
	t.Cleanup(ts.Close)
	return store, ts
}

// TestDamageAnswerSaysWhatToDo: a 500 for a damaged store says what its
// operator can do (run cairn verify), once; it said only what was
// damaged.
func TestDamageAnswerSaysWhatToDo(t *testing.T) {
	_, ts := serveDamagedBase(t, 3, "junk")
	resp, err := http.Get(ts.URL + "/v1/sessions/d/head")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e struct{ Code, Error string }
	_ = json.Unmarshal(b, &e)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(e.Error, "the base marker of session d") ||
		strings.Count(e.Error, "cairn verify names every damaged object") != 1 {
		t.Errorf("GET head of a damaged session: %s %s; want 500 naming the damage and what to do, once", resp.Status, b)
	}
}

// TestDamagedBaseMarkerHTTP: a session whose base marker says a step
// above its head that no removal writes is a damaged store, answered as
// the server answers store corruption (500 "internal", the error in the
// user's words), never 404 "removed" or "pruned"; a commit onto it is
// refused and writes nothing.
func TestDamagedBaseMarkerHTTP(t *testing.T) {
	ctx := context.Background()
	store, ts := serveDamagedBase(t, 5, "99")
	want := "session d: its base marker says step 99 but its newest step is 5, which is neither a removal nor a prune"
	check := func(method, path, body string) {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var e struct{ Code, Error string }
		_ = json.Unmarshal(b, &e)
		if resp.StatusCode != http.StatusInternalServerError || e.Code != "internal" || !strings.Contains(e.Error, want) || strings.Contains(e.Error, "steps/") {
			t.Errorf("%s %s: %s %s; want 500 internal saying %q", method, path, resp.Status, b, want)
		}
	}
	check("GET", "/v1/sessions/d/head", "")
	check("GET", "/v1/sessions/d/steps/3", "")
	check("GET", "/v1/sessions/d/log", "")
	check("POST", "/v1/sessions/d/steps", `{"state":{"i":6}}`)
	if _, err := store.Get(ctx, manifest.StepKey("d", 6), 0, -1); err == nil {
		t.Error("a refused commit wrote d@6")
	}
}

// TestCorruptStepHTTP: a session whose newest step object is corrupt is
// answered 500 "internal" with the error naming the session and step in
// words, not the object's store key.
func TestCorruptStepHTTP(t *testing.T) {
	ctx := context.Background()
	store := memStore()
	s, _ := cairn.OpenStore(store).Session("d")
	for i := 0; i < 2; i++ {
		if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"i":1}`)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	castest.Damage(t, store, manifest.StepKey("d", 2))
	ts := httptest.NewServer(New(cairn.OpenStore(store), Options{}))
	defer ts.Close()
	for _, path := range []string{"/v1/sessions/d/head", "/v1/sessions/d/log"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct{ Code, Error string }
		_ = json.Unmarshal(body, &e)
		if resp.StatusCode != http.StatusInternalServerError || e.Code != "internal" ||
			!strings.Contains(e.Error, "session d, step 2") || strings.Contains(e.Error, "steps/") || strings.Contains(e.Error, "00000000000000000002") {
			t.Errorf("GET %s: %s %s; want 500 internal naming session d, step 2 and no store key", path, resp.Status, body)
		}
	}
}

// TestListsGoPastADamagedSession: one session whose head the store holds
// damaged made GET /v1/sessions and GET /v1/inbox answer 500 and list
// nothing, so one bad object hid every other session and every human's
// question. Both now list the readable sessions and name the damaged one
// in "unreadable", as cairn sessions and cairn inbox do.
func TestListsGoPastADamagedSession(t *testing.T) {
	ctx := context.Background()
	store := memStore()
	ws := cairn.OpenStore(store)
	for _, name := range []string{"a", "d", "z"} {
		s, _ := ws.Session(name)
		for i := 0; i < 2; i++ {
			opts := cairn.CommitOptions{}
			if name == "z" && i == 1 {
				opts = cairn.CommitOptions{Status: cairn.AwaitingInput, Record: []byte(`{"question":"go on?"}`)}
			}
			if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"i":1}`)), opts); err != nil {
				t.Fatal(err)
			}
		}
	}
	castest.Damage(t, store, manifest.StepKey("d", 2))
	ts := httptest.NewServer(New(cairn.OpenStore(store), Options{}))
	defer ts.Close()
	type unreadable []struct{ Session, Error string }
	get := func(path string, v any) {
		t.Helper()
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s %s; want 200 listing the readable sessions", path, resp.Status, body)
		}
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("GET %s: %v\n%s", path, err, body)
		}
	}
	checkDamage := func(path string, u unreadable) {
		t.Helper()
		if len(u) != 1 || u[0].Session != "d" || !strings.Contains(u[0].Error, "session d, step 2") || strings.Contains(u[0].Error, "steps/") {
			t.Errorf("GET %s: unreadable = %+v; want session d, its error in words", path, u)
		}
	}
	var list struct {
		Sessions []struct {
			Session string
			Head    uint64
		}
		Unreadable unreadable
	}
	get("/v1/sessions", &list)
	if len(list.Sessions) != 2 || list.Sessions[0].Session != "a" || list.Sessions[1].Session != "z" || list.Sessions[1].Head != 2 {
		t.Errorf("GET /v1/sessions: sessions = %+v; want a and z", list.Sessions)
	}
	checkDamage("/v1/sessions", list.Unreadable)
	var inbox struct {
		Pending []struct {
			Session  string
			Question string
		}
		Unreadable unreadable
	}
	get("/v1/inbox", &inbox)
	if len(inbox.Pending) != 1 || inbox.Pending[0].Session != "z" || inbox.Pending[0].Question != "go on?" {
		t.Errorf("GET /v1/inbox: pending = %+v; want z's question", inbox.Pending)
	}
	checkDamage("/v1/inbox", inbox.Unreadable)
	// Both answers, damage included, are what openapi.json describes.
	c := &checker{t: t, spec: loadSpec(t), base: ts.URL, covered: map[string]bool{}}
	c.do("GET", "/v1/sessions", "", 200)
	c.do("GET", "/v1/inbox", "", 200)
	// A prefix that leaves the damaged session out lists no damage.
	list.Unreadable = nil
	get("/v1/sessions?prefix=z", &list)
	if len(list.Sessions) != 1 || list.Unreadable != nil {
		t.Errorf("GET /v1/sessions?prefix=z: %+v; want z alone, no damage", list)
	}
}
