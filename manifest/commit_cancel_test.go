package manifest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

// TestCommitBuildStopsWhenCancelled: a commit whose context is cancelled
// while it builds its state (reading a large directory, say: here
// cancelled from inside the build, between two nodes) stops at the
// next node. The sink took every node until the build ended, so a
// cancelled commit of a million-file directory read all of it before it
// returned context.Canceled at its first put.
func TestCommitBuildStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store := mem.New()
	repo := manifest.NewRepo(store, 0)
	big := func(key string) []byte {
		return []byte(`{"` + key + `":"` + strings.Repeat(key, 64<<10) + `"}`)
	}
	var afterCancel error
	_, err := repo.Commit(ctx, nil, nil, manifest.CommitInput{Session: "s",
		Build: func(sink tree.Sink, _ func(cas.ID) bool) (manifest.StateKind, tree.Ref, error) {
			if _, err := tree.BuildJSON(big("a"), sink); err != nil {
				return 0, tree.Ref{}, err
			}
			cancel()
			ref, err := tree.BuildJSON(big("b"), sink)
			afterCancel = err
			return manifest.StateJSON, ref, err
		}})
	if !errors.Is(afterCancel, context.Canceled) {
		t.Errorf("the sink took a node after the commit was cancelled: %v; want context.Canceled", afterCancel)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("commit cancelled while it built its state: %v; want context.Canceled", err)
	}
	n := 0
	if err := store.List(context.Background(), "", "", func(cas.Info) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("a commit cancelled before its first put left %d objects in the store", n)
	}
}
