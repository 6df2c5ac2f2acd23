package httpapi

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/manifest"
)

// TestNotFoundBodiesSaidOnce: the 404 of a step the store lost, of a
// step of a fork's history it lost, and of a fork's step below where its
// history starts says what is missing and why once, in the Go API's
// words, which this layer no longer rewrites ("not found: " was taken
// out of the Go text, and the history's start was said as "the history
// of y starts at step 5").
func TestNotFoundBodiesSaidOnce(t *testing.T) {
	ctx := context.Background()
	store := memStore()
	ws := cairn.OpenStore(store)
	commit := func(name string, n int) {
		t.Helper()
		s, _ := ws.Session(name)
		for range n {
			if _, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	fork := func(ref, to string) {
		t.Helper()
		st, err := ws.Resolve(ctx, ref)
		if err == nil {
			_, err = ws.Fork(ctx, st, to)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	commit("d", 4)
	commit("a", 4)
	fork("a@3", "x")
	// y, forked from r@6: r's name was removed and written again; y's
	// base marker is gone (a store of an older cairn) and r's old steps
	// swept, so its history starts at r@5, which has no parent.
	commit("r", 3)
	if _, err := ws.Remove(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	commit("r", 2)
	fork("r@6", "y")
	for _, k := range []string{manifest.StepKey("d", 2), manifest.StepKey("a", 2),
		manifest.StepKey("r", 1), manifest.StepKey("r", 2), manifest.StepKey("r", 3), manifest.StepKey("r", 4),
		manifest.BaseKey("y"), manifest.BaseKeyAt("y", 5)} {
		if err := store.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	// A fresh server: ws holds the steps in its cache.
	srv := httptest.NewServer(New(cairn.OpenStore(store), Options{}))
	t.Cleanup(srv.Close)
	c := &checker{t: t, spec: loadSpec(t), base: srv.URL, covered: map[string]bool{}}
	for _, tc := range []struct{ path, want string }{
		{"/v1/sessions/d/steps/2", "step d@2: the store has lost it (cairn verify lists what is missing)"},
		{"/v1/sessions/x/steps/2", "step x@2: the store has lost a step of the history of x below its step 3 (cairn verify lists what is missing)"},
		{"/v1/sessions/y/steps/2", "step y@2: the session's history starts at step 5"},
	} {
		if got := c.do("GET", tc.path, "", 404); got["code"] != "not_found" || got["error"] != tc.want {
			t.Errorf("GET %s: %v; want not_found, %q", tc.path, got, tc.want)
		}
	}
}
