package cairn_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

// A step committed after cairn rm by an older cairn names the tombstone
// as its parent. Its log ends there without calling the removed
// session's history pruned, as a new commit's does.
func TestLogAfterRemoveOlderParent(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	commitSmall(t, ws, "p", 3)
	if _, err := ws.Remove(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	repo := manifest.NewRepo(store, 0)
	tomb, err := repo.ReadStep(ctx, "p", 4)
	if err != nil || !manifest.IsTombstone(tomb.Manifest) {
		t.Fatalf("p@4: %v, want the tombstone", err)
	}
	root, err := tree.BuildJSON([]byte(`{"new":1}`), sinkFunc(func(cas.ID, []byte) error { return errors.New("no blobs") }))
	if err != nil {
		t.Fatal(err)
	}
	parent := tomb.Pointer()
	m := &manifest.Manifest{
		Session: "p", Number: 5, Time: time.Unix(0, 0).UTC(), Kind: manifest.StateJSON, Root: root, Parent: &parent,
		Layout: manifest.Layout{Steps: []manifest.Range{{Session: "p", First: 5, Last: 5}}},
	}
	if _, _, err := repo.WriteStep(ctx, m, nil); err != nil {
		t.Fatal(err)
	}
	if got := logOf(t, ws, "p"); len(got) != 1 || got[0] != "p@5" {
		t.Errorf("log = %v, want [p@5], not truncated", got)
	}
}

type sinkFunc func(cas.ID, []byte) error

func (f sinkFunc) Put(id cas.ID, raw []byte) error { return f(id, raw) }
