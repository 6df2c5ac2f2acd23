package cairn_test

import (
	"context"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/fs"
)

// oneStep opens a workspace on a new local store and commits {"a":1}
// to session s: the setting of the API tests that need one session with
// one step. The workspace is closed when the test ends.
func oneStep(t *testing.T) (cas.Store, *cairn.Workspace, *cairn.Session, *cairn.Step) {
	t.Helper()
	store, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := cairn.OpenStore(store)
	t.Cleanup(func() { w.Close() })
	s, err := w.Session("s")
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Commit(context.Background(), cairn.JSON([]byte(`{"a":1}`)), cairn.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return store, w, s, st
}
