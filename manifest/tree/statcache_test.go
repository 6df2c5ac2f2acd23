package tree_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/manifest/tree"
)

// mapCache is a tree.StatCache in memory: old is what the last build
// recorded, next what this one records. It trusts every record, racy or
// not; the racy rule belongs to the cache (see internal/dircache).
type mapCache struct {
	old, next map[string]cacheRec
}

type cacheRec struct {
	dir     bool
	st      tree.FileStat
	entries int
	ref     tree.Ref
}

func newMapCache() *mapCache {
	return &mapCache{old: map[string]cacheRec{}, next: map[string]cacheRec{}}
}

func (c *mapCache) File(p string) (tree.FileStat, tree.Ref, bool) {
	r, ok := c.old[p]
	return r.st, r.ref, ok && !r.dir
}

func (c *mapCache) Dir(p string) (tree.Ref, int, bool) {
	r, ok := c.old[p]
	return r.ref, r.entries, ok && r.dir
}

func (c *mapCache) SetFile(p string, st tree.FileStat, ref tree.Ref) {
	c.next[p] = cacheRec{st: st, ref: ref}
}

func (c *mapCache) SetDir(p string, n int, ref tree.Ref) {
	c.next[p] = cacheRec{dir: true, entries: n, ref: ref}
}

// turn makes this build's records the next build's.
func (c *mapCache) turn() { c.old, c.next = c.next, map[string]cacheRec{} }

func buildCached(t *testing.T, s *memStore, root string, c *mapCache, known func(cas.ID) bool) tree.Ref {
	t.Helper()
	ref, err := tree.BuildDirWith(root, s, tree.DirOptions{Cache: c, Known: known})
	if err != nil {
		t.Fatal(err)
	}
	c.turn()
	return ref
}

// TestStatCacheTrustsOnlyKnownRefs checks both sides of the rule: a file
// whose stat data matches its record takes the recorded ref without
// being read, but only if the store knows that ref; otherwise the file
// is read.
func TestStatCacheTrustsOnlyKnownRefs(t *testing.T) {
	root := t.TempDir()
	makeWideDir(t, root)
	s := newMemStore()
	c := newMapCache()
	want := buildCached(t, s, root, c, s.has)

	// A record that lies about f010.txt's content, with its true stat
	// data, pointing at a blob the store holds: used, so not read.
	decoy := s.putBlob([]byte("decoy content, longer than an inline ref holds"))
	rec := c.old["f010.txt"]
	rec.ref = decoy
	c.old["f010.txt"] = rec
	delete(c.old, "") // the root's record would stand for the old listing
	got := buildCached(t, s, root, c, s.has)
	if got.Equal(want) {
		t.Fatal("a matching record was not used: the file was read")
	}
	// The same lie pointing at content the store does not know: read.
	unknown := tree.Ref{Kind: tree.Blob, ID: cas.Sum([]byte("not stored")), Size: 10}
	rec.ref = unknown
	c.old["f010.txt"] = rec
	delete(c.old, "")
	if got := buildCached(t, s, root, c, s.has); !got.Equal(want) {
		t.Error("a record naming an unknown blob was trusted")
	}
	// Without Known nothing is trusted.
	rec.ref = decoy
	c.old["f010.txt"] = rec
	delete(c.old, "")
	if got := buildCached(t, s, root, c, nil); !got.Equal(want) {
		t.Error("a record was trusted without Known")
	}
}

// TestStatCacheDirReuse checks that an untouched directory takes its
// recorded ref, and that any change below it, a mode change, a new or
// removed entry or a file replaced by a directory, rebuilds it.
func TestStatCacheDirReuse(t *testing.T) {
	root := t.TempDir()
	makeWideDir(t, root)
	s := newMemStore()
	c := newMapCache()
	buildCached(t, s, root, c, s.has)

	// Untouched: the recorded ref of sub stands, even a decoy one.
	decoyNode := s.putNode(&tree.NodeData{Type: tree.TypeDir, Entries: []tree.Entry{{Name: "x", Ref: tree.Ref{Kind: tree.Inline}}}}, 1)
	rec := c.old["sub"]
	rec.ref = decoyNode
	c.old["sub"] = rec
	delete(c.old, "")
	buildCached(t, s, root, c, s.has)
	if got := c.old["sub"].ref; !got.Equal(decoyNode) {
		t.Fatalf("untouched directory rebuilt: %v, want its recorded ref", got)
	}

	sub := filepath.Join(root, "sub")
	for _, tc := range []struct {
		name   string
		change func() error
	}{
		{"chmod", func() error { return os.Chmod(filepath.Join(sub, "g03.md"), 0o755) }},
		{"new file", func() error { return os.WriteFile(filepath.Join(sub, "new.txt"), []byte("new"), 0o644) }},
		{"removed file", func() error { return os.Remove(filepath.Join(sub, "g04.md")) }},
		{"rename", func() error { return os.Rename(filepath.Join(sub, "g05.md"), filepath.Join(sub, "g05b.md")) }},
		{"file replaced by a directory", func() error {
			if err := os.Remove(filepath.Join(sub, "g06.md")); err != nil {
				return err
			}
			return os.Mkdir(filepath.Join(sub, "g06.md"), 0o755)
		}},
		{"file replaced by a symlink", func() error {
			if err := os.Remove(filepath.Join(sub, "g07.md")); err != nil {
				return err
			}
			return os.Symlink("g08.md", filepath.Join(sub, "g07.md"))
		}},
	} {
		rec := c.old["sub"]
		rec.ref = decoyNode
		c.old["sub"] = rec
		if err := tc.change(); err != nil {
			t.Fatal(err)
		}
		buildCached(t, s, root, c, s.has)
		got := c.old["sub"].ref
		if want := buildDir(t, newMemStore(), sub); !got.Equal(want) {
			t.Errorf("%s: sub is %v, want it rebuilt as %v", tc.name, got, want)
		}
	}
}

// countingSink counts the puts a build makes, and those of new content.
type countingSink struct {
	s         *memStore
	puts, new int
}

func (c *countingSink) Put(id cas.ID, raw []byte) error {
	c.puts++
	if !c.s.has(id) {
		c.new++
	}
	return c.s.Put(id, raw)
}

// TestStatCacheReadsOnlyChanged checks what the cache is for: after one
// file changes, a build hands the sink only that file's content and the
// directories above it; every other file and directory is taken from the
// cache without being read or hashed.
func TestStatCacheReadsOnlyChanged(t *testing.T) {
	root := t.TempDir()
	makeWideDir(t, root)
	s := newMemStore()
	c := newMapCache()
	buildCached(t, s, root, c, s.has)
	if err := os.WriteFile(filepath.Join(root, "sub", "g02.md"), []byte("a new version of this file, long enough not to be inline"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := &countingSink{s: s}
	ref, err := tree.BuildDirWith(root, cs, tree.DirOptions{Cache: c, Known: s.has})
	if err != nil {
		t.Fatal(err)
	}
	// New: the file's blob, sub's leaf and list node, and the root's
	// leaf (two when the changed entry moves a boundary) and list node. In all: those and the root's other leaves, rebuilt from
	// entries in memory; without the cache every one of the 73 files
	// would be read and put again.
	if cs.new > 6 || cs.puts > 16 {
		t.Errorf("a build after one edit made %d puts, %d of them new; want at most 16 and 6", cs.puts, cs.new)
	}
	if want := buildDir(t, newMemStore(), root); !ref.Equal(want) {
		t.Errorf("cached build gives %v, a fresh one %v", ref, want)
	}
}
