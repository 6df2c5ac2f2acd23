package tree_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/manifest/tree"
)

// makeWideDir creates a seeded directory with more entries than one
// directory leaf holds: 60 small text files of 0.3–20 KB, an executable,
// a symlink and a subdirectory of 12 files.
func makeWideDir(t *testing.T, root string) {
	t.Helper()
	write := func(name string, data string, perm os.FileMode) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, perm); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 60 {
		write(fmt.Sprintf("f%03d.txt", i), seededText(300+i*330, uint64(i)), 0o644)
	}
	for i := range 12 {
		write(fmt.Sprintf("sub/g%02d.md", i), seededText(100+i*50, uint64(100+i)), 0o644)
	}
	write("run.sh", "#!/bin/sh\necho ok\n", 0o755)
	if err := os.Symlink("f000.txt", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
}

// TestGoldenDirList pins the version 3 directory encoding: a large
// directory as directory leaves under list nodes, and small files split
// with SmallFileChunks.
func TestGoldenDirList(t *testing.T) {
	root := t.TempDir()
	makeWideDir(t, root)
	s := newMemStore()
	ref := buildDir(t, s, root)
	n, err := (&tree.Reader{Src: s}).Node(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if n.Type != tree.TypeList || ref.Size != 63 {
		t.Fatalf("root is a %q node of size %d, want a list of 63 entries", n.Type, ref.Size)
	}
	checkGolden(t, "tree-dir-list.golden", goldenListing(s, ref))
}

// dirPaths returns every path WalkDir yields with its mode and ref.
func dirPaths(t *testing.T, s *memStore, ref tree.Ref) []string {
	t.Helper()
	var out []string
	err := (&tree.Reader{Src: s}).WalkDir(context.Background(), ref, func(fi tree.FileInfo) error {
		ref := tree.AppendRef(nil, fi.Ref)
		if fi.Mode == tree.ModeDir {
			ref = nil // the two forms of a directory differ
		}
		out = append(out, fmt.Sprintf("%s %d %x", fi.Path, fi.Mode, ref))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// flatten rewrites the directory at ref in the version 2 form: every
// directory one TypeDir node, however large.
func flatten(t *testing.T, s *memStore, ref tree.Ref) tree.Ref {
	t.Helper()
	r := &tree.Reader{Src: s}
	var entries []tree.Entry
	n, err := r.Node(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if n.Type == tree.TypeDir {
		entries = n.Entries
	} else if entries, err = r.ListEntries(context.Background(), ref, tree.TypeDir); err != nil {
		t.Fatal(err)
	}
	entries = slices.Clone(entries)
	for i, e := range entries {
		if e.Mode == tree.ModeDir {
			entries[i].Ref = flatten(t, s, e.Ref)
		}
	}
	return s.putNode(&tree.NodeData{Type: tree.TypeDir, Entries: entries}, int64(len(entries)))
}

// TestDirV2StillReads checks that directories written before version 3,
// one node however large, read, check out and diff as before.
func TestDirV2StillReads(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	makeWideDir(t, src)
	s := newMemStore()
	list := buildDir(t, s, src)
	flat := flatten(t, s, list)
	if flat.Equal(list) {
		t.Fatal("flat and list forms are the same node")
	}
	if got, want := dirPaths(t, s, flat), dirPaths(t, s, list); !slices.Equal(got, want) {
		t.Errorf("flat directory walks as\n%.2000v\nwant\n%.2000v", got, want)
	}
	r := &tree.Reader{Src: s}
	var changes []tree.Change
	if err := r.DiffDir(ctx, flat, list, func(c tree.Change) error { changes = append(changes, c); return nil }); err != nil || len(changes) != 0 {
		t.Errorf("diff of flat and list forms: %v, %v", changes, err)
	}
	dst := filepath.Join(t.TempDir(), "out")
	if err := r.Checkout(ctx, flat, dst); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"f059.txt", "sub/g11.md"} {
		a, _ := os.ReadFile(filepath.Join(src, name))
		b, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || string(a) != string(b) {
			t.Errorf("%s checked out from the flat form differs: %v", name, err)
		}
	}
}

// TestDirListOneEditOneLeaf checks what the list form is for: changing
// one file of a large directory stores the file, one directory leaf and
// the list node above it, not the whole listing again.
func TestDirListOneEditOneLeaf(t *testing.T) {
	src := t.TempDir()
	makeWideDir(t, src)
	base := newMemStore()
	buildDir(t, base, src)
	if err := os.WriteFile(filepath.Join(src, "f030.txt"), []byte("rewritten"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &recordingSink{base: base, store: newMemStore(), added: map[cas.ID]int{}}
	if _, err := tree.BuildDir(src, rec); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	total := 0
	for _, n := range rec.added {
		sizes = append(sizes, n)
		total += n
	}
	// One listing of the root is 63 entries of about 45 bytes.
	if len(rec.added) > 3 || total > 1200 {
		t.Errorf("one small edit added %d nodes of %v bytes (%d in all), want the leaf and list node only", len(rec.added), sizes, total)
	}
}

// TestDirListOrderChecked checks that a directory whose leaves are out of
// name order, which no writer produces, is refused as corrupt.
func TestDirListOrderChecked(t *testing.T) {
	s := newMemStore()
	blob := tree.Ref{Kind: tree.Inline, Data: []byte("x")}
	leaf := func(names ...string) tree.Ref {
		n := &tree.NodeData{Type: tree.TypeDir}
		for _, name := range names {
			n.Entries = append(n.Entries, tree.Entry{Name: name, Ref: blob})
		}
		return s.putNode(n, int64(len(names)))
	}
	list := s.putNode(&tree.NodeData{Type: tree.TypeList, Entries: []tree.Entry{{Ref: leaf("b", "c")}, {Ref: leaf("a", "d")}}}, 4)
	err := (&tree.Reader{Src: s}).WalkDir(context.Background(), list, func(tree.FileInfo) error { return nil })
	if !errors.Is(err, cas.ErrCorrupt) {
		t.Errorf("out-of-order directory list: %v, want ErrCorrupt", err)
	}
	mixed := s.putNode(&tree.NodeData{Type: tree.TypeList, Entries: []tree.Entry{{Ref: leaf("a")}, {Ref: s.putNode(&tree.NodeData{Type: tree.TypeArray, Entries: []tree.Entry{{Ref: blob}}}, 1)}}}, 2)
	err = (&tree.Reader{Src: s}).WalkDir(context.Background(), mixed, func(tree.FileInfo) error { return nil })
	if !errors.Is(err, cas.ErrCorrupt) {
		t.Errorf("directory list with an array leaf: %v, want ErrCorrupt", err)
	}
}
