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
	"github.com/cairnlog/cairn/manifest"
)

// TestDamageAnswerSaysWhatToDo: a 500 for a damaged store says what its
// operator can do (run cairn verify), once; it said only what was
// damaged.
func TestDamageAnswerSaysWhatToDo(t *testing.T) {
	ctx := context.Background()
	store := memStore()
	s, _ := cairn.OpenStore(store).Session("d")
	for i := 0; i < 3; i++ {
		if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"i":1}`)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Put(ctx, manifest.BaseKey("d"), []byte("junk"), cas.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(New(cairn.OpenStore(store), Options{}))
	defer ts.Close()
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
