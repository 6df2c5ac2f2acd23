package manifest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/manifest/tree"
)

// TestOlderVersionPackStillReads: a store whose compaction pack was
// written the way cairn wrote it before manifest format 5 (an object of
// its own at packs/<s>/<n>, before a version 3 step object whose layout
// names it) reads, verifies, takes new commits that merge that pack into
// a higher level, and keeps every step through gc.
func TestOlderVersionPackStillReads(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	r := NewRepo(store, 0)
	var docs [][]byte
	var items []string
	commit := func(head *Step, ix *Index, fanout int) *Step {
		t.Helper()
		n := len(docs) + 1
		items = append(items, fmt.Sprintf(`"%s"`, strings.Repeat(fmt.Sprint(n), 400)))
		doc := []byte("[" + strings.Join(items, ",") + "]")
		docs = append(docs, doc)
		st, err := r.Commit(ctx, head, ix, CommitInput{Session: "s", Fanout: fanout,
			Build: func(sink tree.Sink, _ func(cas.ID) bool) (StateKind, tree.Ref, error) {
				root, err := tree.BuildJSON(doc, sink)
				return StateJSON, root, err
			}})
		if err != nil {
			t.Fatalf("commit %d: %v", n, err)
		}
		return st
	}
	var head *Step
	ix := r.NewIndex()
	for range 4 {
		head = commit(head, ix, 0)
	}
	// Step 5 compacts (fanout 4) into its own object; rewrite it as an
	// older cairn wrote it: the merged blobs in packs/s/5, the step's new
	// blobs in a step object whose layout names that pack and step 5.
	head = commit(head, ix, 4)
	if head.Copies == 0 {
		t.Fatal("step 5 did not compact")
	}
	raw, err := store.Get(ctx, head.Key, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := pack.Parse(raw, head.Key)
	if err != nil {
		t.Fatal(err)
	}
	split := len(obj.Entries) - int(head.Copies)
	var own, merged pack.Builder
	for i, e := range obj.Entries {
		b := &own
		if i >= split {
			b = &merged
		}
		b.AddStored(e.ID, e.RawLen, obj.Stored(e))
	}
	packData, _ := merged.Build(pack.KindPack, nil)
	if err := store.Put(ctx, PackKey("s", 5), packData, cas.PutOptions{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	m := *head.Manifest
	m.Copies = 0
	m.Layout = Layout{Packs: []PackRef{{Session: "s", Number: 5, Level: 1}}, Steps: []Range{{Session: "s", First: 5, Last: 5}}}
	if err := store.Delete(ctx, head.Key); err != nil {
		t.Fatal(err)
	}
	old, _, err := r.WriteStep(ctx, &m, &own)
	if err != nil {
		t.Fatal(err)
	}
	if v := m.Encode()[4]; v != 3 {
		t.Fatalf("the rewritten step is version %d, want 3", v)
	}

	// A fresh process reads every step and goes on from the old layout,
	// until a merge of level 2 takes the old pack in.
	r = NewRepo(store, 0)
	readAll := func(when string) {
		t.Helper()
		for n, doc := range docs {
			st, err := r.ReadStep(ctx, "s", uint64(n+1))
			if err != nil {
				t.Fatalf("%s: step %d: %v", when, n+1, err)
			}
			rix := r.NewIndex()
			if err := rix.Load(ctx, st.Layout); err != nil {
				t.Fatalf("%s: step %d: %v", when, n+1, err)
			}
			got, err := (&tree.Reader{Src: rix}).JSON(ctx, st.Root)
			if err != nil || string(got) != string(doc) {
				t.Fatalf("%s: step %d reads back %d bytes, %v", when, n+1, len(got), err)
			}
		}
		rep, err := r.Verify(ctx)
		if err != nil || len(rep.Problems) > 0 {
			t.Fatalf("%s: verify: %v %v", when, err, rep.Problems)
		}
	}
	readAll("before new commits")
	head, ix = old, r.NewIndex()
	for len(docs) < 20 {
		head = commit(head, ix, 4)
	}
	if head.Layout.Packs[0] != (PackRef{Session: "s", Number: head.Layout.Packs[0].Number, Level: 2, InStep: true}) {
		t.Fatalf("step %d's layout %+v: want the old pack merged into a level-2 pack", head.Number, head.Layout)
	}
	readAll("after a level-2 merge")
	for range 2 {
		if _, err := r.GC(ctx, GCOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.Stat(ctx, PackKey("s", 5)); err != nil {
		t.Fatalf("gc deleted the old pack, which steps 5..: name: %v", err)
	}
	readAll("after gc")
}
