package manifest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/cas/metered"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/manifest/tree"
)

// TestViewIndexesEachObjectOnce: diffing each step of a session with the
// one before it through views indexes each object of the session's
// layouts once (an Index loaded per diff indexed the whole layout each
// time), and finds the same changes as an Index of both layouts does.
func TestViewIndexesEachObjectOnce(t *testing.T) {
	ctx := context.Background()
	m := metered.New(mem.New())
	const n = 60
	head, _ := commitDocs(t, NewRepo(m, 0), n)
	if len(head.Layout.Packs) == 0 {
		t.Fatal("no compaction happened: the test needs packs in the layouts")
	}
	r := NewRepo(m, 0) // a fresh reader
	objects := map[string]bool{}
	var loads int
	var prev *Step
	for i := uint64(1); i <= n; i++ {
		st, err := r.ReadStep(ctx, "s", i)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range LayoutKeys(st.Layout) {
			objects[k] = true
		}
		if prev != nil {
			v, err := r.View(ctx, prev.Layout, st.Layout)
			if err != nil {
				t.Fatal(err)
			}
			got := diffWith(t, v, prev, st)
			ix := r.NewIndex()
			for _, l := range []Layout{prev.Layout, st.Layout} {
				if err := ix.Load(ctx, l); err != nil {
					t.Fatal(err)
				}
			}
			loads += len(ix.keys)
			if want := diffWith(t, ix, prev, st); !slices.Equal(got, want) {
				t.Fatalf("diff of steps %d and %d through a view = %v, through an index = %v", i-1, i, got, want)
			}
			if len(got) != 1 || got[0] != (tree.Change{Path: fmt.Sprintf("/%d", i-1), Kind: tree.Added}) {
				t.Fatalf("diff of steps %d and %d = %v, want element %d added", i-1, i, got, i-1)
			}
		}
		prev = st
	}
	t.Logf("%d objects in the layouts: the views indexed %d; an index per diff indexed %d", len(objects), r.reads.built, loads)
	if r.reads.built > int64(len(objects)) {
		t.Errorf("the views of %d diffs indexed %d objects; want at most the %d objects of the layouts, each once", n-1, r.reads.built, len(objects))
	}
}

// diffWith diffs the states of a and b with the blobs of src.
func diffWith(t *testing.T, src tree.Source, a, b *Step) []tree.Change {
	t.Helper()
	var out []tree.Change
	rd := &tree.Reader{Src: src, Limits: tree.DefaultLimits}
	if err := rd.DiffJSON(context.Background(), a.Root, b.Root, func(c tree.Change) error {
		out = append(out, c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestViewOfAReplacedObject: what a view learned of an object is kept for
// later reads, but the object at a key may change: gc deleted it, and
// its slot was filled again, by another process. A read whose blob is
// not where a kept table says must read the objects again, as a fresh
// index would, never fail for it nor take bytes from the wrong place.
// Here another process replaced every object of the session by those of
// another session of the same name and shape.
func TestViewOfAReplacedObject(t *testing.T) {
	ctx := context.Background()
	const n = 6
	old, newer, store := mem.New(), mem.New(), mem.New()
	commitItems(t, NewRepo(old, 0), n, "old")
	commitItems(t, NewRepo(newer, 0), n, "new")
	// move puts the objects of from in place of the store's.
	move := func(from cas.Store) {
		t.Helper()
		if err := from.List(ctx, "", "", func(info cas.Info) error {
			data, err := from.Get(ctx, info.Key, 0, -1)
			if err != nil {
				return err
			}
			if err := store.Delete(ctx, info.Key); err != nil && !errors.Is(err, cas.ErrNotFound) {
				return err
			}
			return store.Put(ctx, info.Key, data, cas.PutOptions{})
		}); err != nil {
			t.Fatal(err)
		}
	}
	r := NewRepo(store, 0)
	read := func() string {
		t.Helper()
		r.SetCacheLimit(0) // another process did it: only the object cache forgets
		head, err := r.ReadStep(ctx, "s", n)
		if err != nil {
			t.Fatal(err)
		}
		v, err := r.View(ctx, head.Layout)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := (&tree.Reader{Src: v, Limits: tree.DefaultLimits}).JSON(ctx, head.Root)
		if err != nil {
			t.Fatalf("read of the state once the objects were replaced: %v", err)
		}
		return string(doc)
	}
	for _, want := range []string{"new", "old", "new"} {
		if want == "old" {
			move(old)
		} else {
			move(newer)
		}
		if got := read(); !strings.HasPrefix(got, `["`+want) {
			t.Fatalf("state = %.20q…, want the %s one", got, want)
		}
	}
}

// commitItems commits n steps to session s of r, each adding an item
// (beginning with prefix) to a list.
func commitItems(t *testing.T, r *Repo, n int, prefix string) {
	t.Helper()
	var head *Step
	ix := r.NewIndex()
	var items []string
	for i := 1; i <= n; i++ {
		items = append(items, fmt.Sprintf(`"%s%s"`, prefix, strings.Repeat(fmt.Sprint(i), 300)))
		doc := []byte("[" + strings.Join(items, ",") + "]")
		st, err := r.Commit(context.Background(), head, ix, CommitInput{Session: "s", Fanout: 4,
			Build: func(sink tree.Sink, _ func(cas.ID) bool) (StateKind, tree.Ref, error) {
				root, err := tree.BuildJSON(doc, sink)
				return StateJSON, root, err
			}})
		if err != nil {
			t.Fatal(err)
		}
		head = st
	}
}

// TestReadIndexBounded: the tables and hints a Repo keeps between reads
// stay within their bounds however many objects and blobs are read (I6).
func TestReadIndexBounded(t *testing.T) {
	const perTable, maxHints = 10, 8
	one := newReadTable(StepKey("s", 1), make([]pack.Entry, perTable)).size()
	ri := newReadIndex(5*one, maxHints)
	for i := range 100 {
		entries := make([]pack.Entry, perTable)
		for j := range entries {
			entries[j].ID = cas.Sum([]byte(fmt.Sprint(i, j)))
		}
		key := StepKey("s", uint64(i+1))
		ri.mu.Lock()
		ri.put(newReadTable(key, entries))
		ri.mu.Unlock()
		ri.setHint(entries[0].ID, key)
		if ri.tables.Cost() > ri.tables.Max() || ri.tables.Len() > 5 {
			t.Fatalf("after %d tables: %d bytes in %d tables, bound %d", i+1, ri.tables.Cost(), ri.tables.Len(), ri.tables.Max())
		}
		if len(ri.hints) > maxHints {
			t.Fatalf("after %d hints: %d kept, bound %d", i+1, len(ri.hints), maxHints)
		}
	}
	ri.mu.Lock()
	defer ri.mu.Unlock()
	if ri.get(StepKey("s", 100)) == nil || ri.get(StepKey("s", 1)) != nil {
		t.Error("the newest table was dropped, or the oldest kept")
	}
}

// TestBlobsOfAnUncachedObjectReadAlone: an object larger than the object
// cache keeps (a merged pack, through an export's 4 MiB cache) was read
// whole again for every blob read from it: an export of a 2,000-step
// session of 28 MB read 24 GB. Once an object is found too large to
// cache, its blobs are read alone, by range, and still verified (I1): a
// state reads with about its layout's bytes, through a view or an index.
func TestBlobsOfAnUncachedObjectReadAlone(t *testing.T) {
	ctx := context.Background()
	m := metered.New(mem.New())
	const n = 40
	commitItems(t, NewRepo(m, 0), n, "x")
	var layout int64
	var v *View
	for _, name := range []string{"index", "view"} {
		r := NewRepo(m, 0)
		r.SetCacheLimit(1) // no object fits
		head, err := r.ReadStep(ctx, "s", n)
		if err != nil {
			t.Fatal(err)
		}
		if layout == 0 {
			for _, k := range LayoutKeys(head.Layout) {
				info, err := m.Stat(ctx, k)
				if err != nil {
					t.Fatal(err)
				}
				layout += info.Size
			}
		}
		var src tree.Source
		if name == "view" {
			if v, err = r.View(ctx, head.Layout); err != nil {
				t.Fatal(err)
			}
			src = v
		} else {
			ix := r.NewIndex()
			if err := ix.Load(ctx, head.Layout); err != nil {
				t.Fatal(err)
			}
			src = ix
		}
		before := m.Counts()
		doc, err := (&tree.Reader{Src: src, Limits: tree.DefaultLimits}).JSON(ctx, head.Root)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(doc), `["x1`) || strings.Count(string(doc), `"x`) != n {
			t.Fatalf("state through the %s = %.40q…", name, doc)
		}
		read := m.Counts().Sub(before)
		t.Logf("through the %s: %d GETs, %d bytes, for a layout of %d bytes", name, read.Get, read.BytesRead, layout)
		if read.BytesRead > layout {
			t.Errorf("reading the state through the %s read %d bytes; want at most the layout's %d", name, read.BytesRead, layout)
		}
	}
	// A diff of each step with the one before reads the same few nodes
	// of a large pack at every step: read again, they cost no request.
	head, err := v.repo.ReadStep(ctx, "s", n)
	if err != nil {
		t.Fatal(err)
	}
	before := m.Counts()
	if _, err := (&tree.Reader{Src: v, Limits: tree.DefaultLimits}).JSON(ctx, head.Root); err != nil {
		t.Fatal(err)
	}
	if got := m.Counts().Sub(before).Get; got != 0 {
		t.Errorf("reading the state again made %d GETs; want 0 (its blobs are small enough to keep)", got)
	}
}
