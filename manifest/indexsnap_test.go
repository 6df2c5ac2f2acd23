package manifest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/manifest/tree"
)

// commitDocs commits n growing JSON documents to session s with fanout
// 4 and returns the head and the writer's index.
func commitDocs(t *testing.T, r *Repo, n int) (*Step, *Index) {
	t.Helper()
	ctx := context.Background()
	var head *Step
	ix := r.NewIndex()
	var items []string
	for i := 1; i <= n; i++ {
		items = append(items, fmt.Sprintf(`"%s"`, strings.Repeat(fmt.Sprint(i), 300)))
		doc := []byte("[" + strings.Join(items, ",") + "]")
		st, err := r.Commit(ctx, head, ix, CommitInput{Session: "s", Fanout: 4,
			Build: func(sink tree.Sink, _ func(cas.ID) bool) (StateKind, tree.Ref, error) {
				root, err := tree.BuildJSON(doc, sink)
				return StateJSON, root, err
			}})
		if err != nil {
			t.Fatal(err)
		}
		head = st
	}
	return head, ix
}

// TestIndexSnapshotRoundTrip: a snapshot of a writer's index, restored
// in another process, is the same dedup set and locates every blob where
// the live index does, across compactions.
func TestIndexSnapshotRoundTrip(t *testing.T) {
	r := NewRepo(mem.New(), 0)
	head, ix := commitDocs(t, r, 11)
	if len(head.Layout.Packs) == 0 {
		t.Fatal("no compaction happened: the test needs a pack in the layout")
	}
	objs, ok := ix.Snapshot(head.Layout)
	if !ok {
		t.Fatal("the writer's index right after a commit does not snapshot")
	}
	st, ix2, err := r.RestoreHead("s", head.Manifest.Encode(), head.ID, objs)
	if err != nil {
		t.Fatal(err)
	}
	if st.Number != head.Number || st.ID != head.ID || st.Key != head.Key {
		t.Fatalf("restored head %s@%d %s, want %s@%d %s", st.Session, st.Number, st.Key, head.Session, head.Number, head.Key)
	}
	if ix2.Len() != ix.Len() {
		t.Fatalf("restored index holds %d blobs, the live one %d", ix2.Len(), ix.Len())
	}
	for _, o := range objs {
		for _, e := range o.Entries {
			a, _ := ix.Locate(e.ID)
			b, ok := ix2.Locate(e.ID)
			if !ok || a != b {
				t.Fatalf("blob %s: live %v, restored %v", e.ID.Short(), a, b)
			}
		}
		if ix2.bytes[o.Key] != ix.bytes[o.Key] {
			t.Fatalf("%s: restored %d bytes, live %d", o.Key, ix2.bytes[o.Key], ix.bytes[o.Key])
		}
	}
	// Reading the state through the restored index works.
	if _, err := (&tree.Reader{Src: ix2}).JSON(context.Background(), st.Root); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreHeadRefusesMismatch: a snapshot that is not exactly the
// manifest's layout, or a manifest that is not the one named, is refused.
func TestRestoreHeadRefusesMismatch(t *testing.T) {
	r := NewRepo(mem.New(), 0)
	head, ix := commitDocs(t, r, 6)
	objs, _ := ix.Snapshot(head.Layout)
	mb := head.Manifest.Encode()
	cases := map[string]func() (string, []byte, cas.ID, []IndexObject){
		"other session": func() (string, []byte, cas.ID, []IndexObject) { return "t", mb, head.ID, objs },
		"wrong id":      func() (string, []byte, cas.ID, []IndexObject) { return "s", mb, cas.Sum(nil), objs },
		"missing object": func() (string, []byte, cas.ID, []IndexObject) {
			return "s", mb, head.ID, objs[1:]
		},
		"extra object": func() (string, []byte, cas.ID, []IndexObject) {
			return "s", mb, head.ID, append(append([]IndexObject(nil), objs...), IndexObject{Key: StepKey("s", 99)})
		},
		"foreign object": func() (string, []byte, cas.ID, []IndexObject) {
			o := append([]IndexObject(nil), objs...)
			o[0].Key = StepKey("other", 1)
			return "s", mb, head.ID, o
		},
		"duplicate object": func() (string, []byte, cas.ID, []IndexObject) {
			o := append([]IndexObject(nil), objs...)
			o[len(o)-1] = o[0]
			return "s", mb, head.ID, o
		},
	}
	for name, c := range cases {
		if _, _, err := r.RestoreHead(c()); err == nil {
			t.Errorf("%s: restored", name)
		} else if name != "other session" && !errors.Is(err, ErrBadSnapshot) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A snapshot of an index that does not cover the layout is refused.
	if _, ok := r.NewIndex().Snapshot(head.Layout); ok {
		t.Error("an empty index snapshots a non-empty layout")
	}
}

// normSnap sorts each object's entries by id, for comparing snapshots.
func normSnap(objs []IndexObject) []IndexObject {
	out := make([]IndexObject, len(objs))
	for i, o := range objs {
		o.Entries = slices.Clone(o.Entries)
		slices.SortFunc(o.Entries, func(a, b pack.Entry) int { return bytes.Compare(a.ID[:], b.ID[:]) })
		out[i] = o
	}
	return out
}

// TestIndexSnapshotKept: a restored index keeps its snapshot while it only
// grows by Add, and Snapshot then hands out exactly what it would build
// from the map; a compaction (blobs moved and objects dropped) makes it
// build from the map again. Checked step by step from a restored index
// committing on through compactions.
func TestIndexSnapshotKept(t *testing.T) {
	ctx := context.Background()
	r := NewRepo(mem.New(), 0)
	// Restored right after a compaction (fanout 4: steps 5 and 10 merge),
	// so the first steps after the restore only grow the index.
	head, ix := commitDocs(t, r, 5)
	if len(head.Layout.Packs) == 0 || len(head.Layout.Steps) != 0 {
		t.Fatalf("step 5's layout %+v: want a pack and no step objects", head.Layout)
	}
	objs, ok := ix.Snapshot(head.Layout)
	if !ok {
		t.Fatal("no snapshot")
	}
	_, ix, err := r.RestoreHead("s", head.Manifest.Encode(), head.ID, objs)
	if err != nil {
		t.Fatal(err)
	}
	if ix.snap == nil {
		t.Fatal("a restored index keeps no snapshot")
	}
	items := []string{}
	kept, built := 0, 0
	for i := 1; i <= 5; i++ {
		items = append(items, fmt.Sprintf(`"%s"`, strings.Repeat(fmt.Sprint(i), 300)))
	}
	for i := 6; i <= 30; i++ {
		items = append(items, fmt.Sprintf(`"%s"`, strings.Repeat(fmt.Sprint(i), 300)))
		doc := []byte("[" + strings.Join(items, ",") + "]")
		st, err := r.Commit(ctx, head, ix, CommitInput{Session: "s", Fanout: 4,
			Build: func(sink tree.Sink, _ func(cas.ID) bool) (StateKind, tree.Ref, error) {
				root, err := tree.BuildJSON(doc, sink)
				return StateJSON, root, err
			}})
		if err != nil {
			t.Fatal(err)
		}
		head = st
		got, ok := ix.Snapshot(head.Layout)
		if !ok {
			t.Fatalf("step %d: no snapshot", i)
		}
		want, ok := ix.buildSnapshot(LayoutKeys(head.Layout))
		if !ok {
			t.Fatalf("step %d: no snapshot from the map", i)
		}
		if !reflect.DeepEqual(normSnap(got), normSnap(want)) {
			t.Fatalf("step %d: kept snapshot differs from the map's", i)
		}
		if ix.snap != nil {
			kept++
		} else {
			built++
		}
	}
	if kept == 0 || built == 0 {
		t.Fatalf("kept %d, built %d: the test should see both", kept, built)
	}
}

// TestIndexSnapshotDuplicateBlob: Snapshot lists each blob once, so a
// snapshot naming one blob in two objects is not one it wrote: restoring
// it fails (the caller reads the store instead).
func TestIndexSnapshotDuplicateBlob(t *testing.T) {
	r := NewRepo(mem.New(), 0)
	head, ix := commitDocs(t, r, 3)
	objs, _ := ix.Snapshot(head.Layout)
	if len(objs) < 2 || len(objs[0].Entries) == 0 {
		t.Fatalf("need two objects, got %d", len(objs))
	}
	objs = normSnap(objs)
	objs[1].Entries = append(objs[1].Entries, objs[0].Entries[0])
	if _, _, err := r.RestoreHead("s", head.Manifest.Encode(), head.ID, objs); !errors.Is(err, ErrBadSnapshot) {
		t.Fatalf("RestoreHead of a snapshot listing a blob twice: %v, want ErrBadSnapshot", err)
	}
}

// TestRestoredIndexGoesOn: a writer that starts from a restored index
// (its blobs in the frozen part) commits on through compactions, which
// thaw it, exactly as a writer whose index never left memory: the same
// layouts and blob locations, step after step, and every blob readable.
func TestRestoredIndexGoesOn(t *testing.T) {
	ctx := context.Background()
	live, restored := NewRepo(mem.New(), 0), NewRepo(mem.New(), 0)
	headL, ixL := commitDocs(t, live, 11)
	headR, ixR0 := commitDocs(t, restored, 11)
	objs, ok := ixR0.Snapshot(headR.Layout)
	if !ok {
		t.Fatal("no snapshot")
	}
	headR, ixR, err := restored.RestoreHead("s", headR.Manifest.Encode(), headR.ID, objs)
	if err != nil {
		t.Fatal(err)
	}
	if ixR.frozen == nil || ixR.frozen.n == 0 {
		t.Fatal("the restored index has no frozen part: the test would not test it")
	}
	var items []string
	for i := 1; i <= 11; i++ {
		items = append(items, fmt.Sprintf(`"%s"`, strings.Repeat(fmt.Sprint(i), 300)))
	}
	thawed := false
	for i := 12; i <= 30; i++ {
		items = append(items, fmt.Sprintf(`"%s"`, strings.Repeat(fmt.Sprint(i), 300)))
		doc := []byte("[" + strings.Join(items, ",") + "]")
		in := CommitInput{Session: "s", Fanout: 4, Build: func(sink tree.Sink, _ func(cas.ID) bool) (StateKind, tree.Ref, error) {
			root, err := tree.BuildJSON(doc, sink)
			return StateJSON, root, err
		}}
		if headL, err = live.Commit(ctx, headL, ixL, in); err != nil {
			t.Fatal(err)
		}
		if headR, err = restored.Commit(ctx, headR, ixR, in); err != nil {
			t.Fatal(err)
		}
		thawed = thawed || ixR.frozen == nil
		if !reflect.DeepEqual(headL.Layout, headR.Layout) || !headL.Root.Equal(headR.Root) {
			t.Fatalf("step %d: restored writer's layout %+v, live %+v", i, headR.Layout, headL.Layout)
		}
		if ixL.Len() != ixR.Len() {
			t.Fatalf("step %d: restored index holds %d blobs, live %d", i, ixR.Len(), ixL.Len())
		}
		objs, ok := ixL.Snapshot(headL.Layout)
		if !ok {
			t.Fatalf("step %d: no snapshot", i)
		}
		for _, o := range objs {
			for _, e := range o.Entries {
				a, _ := ixL.Locate(e.ID)
				b, ok := ixR.Locate(e.ID)
				if !ok || a != b || !ixR.Has(e.ID) {
					t.Fatalf("step %d: blob %s: live %v, restored %v", i, e.ID.Short(), a, b)
				}
			}
		}
		got, err := (&tree.Reader{Src: ixR}).JSON(ctx, headR.Root)
		if err != nil || !bytes.Equal(got, doc) {
			t.Fatalf("step %d: state read through the restored index: %v", i, err)
		}
	}
	if !thawed {
		t.Fatal("no compaction thawed the restored index: the test would not test it")
	}
	if ixR.Has(cas.Sum([]byte("not a blob"))) {
		t.Fatal("the index holds a blob never added")
	}
}
