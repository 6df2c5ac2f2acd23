package realpath

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// tree makes, under a fresh directory (itself reached through no link):
//
//	store/steps/          a directory
//	storex/               a sibling whose name starts with store's
//	out/                  a directory outside the store
//	out/in -> ../store    a relative link into the store
//	abs -> ROOT/store     an absolute link into the store
//	deep -> out/sub/x     a link to a path that does not exist yet
//	into -> store/new     a link to nothing, inside the store
//	loop -> loop          a loop
func tree(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"store/steps", "storex", "out"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"out/in": filepath.Join("..", "store"),
		"abs":    filepath.Join(root, "store"),
		"deep":   filepath.Join("out", "sub", "x"),
		"into":   filepath.Join("store", "new"),
		"loop":   "loop",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
	}
	return root
}

func TestResolve(t *testing.T) {
	root := tree(t)
	j := func(names ...string) string { return filepath.Join(append([]string{root}, names...)...) }
	sep := string(filepath.Separator)
	for _, c := range []struct{ in, want string }{
		{j("store"), j("store")},
		{j("store") + sep + sep, j("store")},                          // trailing and doubled separators
		{j("store") + sep + "." + sep + "steps", j("store", "steps")}, // "."
		{j("out", "in"), j("store")},                                  // relative link
		{j("out", "in", "steps", "a", "b"), j("store", "steps", "a", "b")},
		{j("abs", "p", "q"), j("store", "p", "q")},        // absent under an absolute link
		{j("out", "in") + sep + ".." + sep + "x", j("x")}, // ".." after the link, not before it
		{j("abs") + sep + ".." + sep + "out", j("out")},
		{j("nope", "..", "abs", "x"), j("store", "x")}, // ".." back out of what does not exist
		{j("deep", "y"), j("out", "sub", "x", "y")},    // link to what does not exist yet
		{j("into"), j("store", "new")},                 // link to nothing
		{j("loop", "x"), j("loop", "x")},               // a loop: as written
		{j("missing", "a", "b"), j("missing", "a", "b")},
	} {
		got, err := Resolve(c.in)
		if err != nil || got != c.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	// Relative to the current directory, whatever it is.
	t.Chdir(j("out"))
	for in, want := range map[string]string{
		"in":                                    j("store"),
		"in" + sep + "new":                      j("store", "new"),
		"." + sep + "a" + sep + "b":             j("out", "a", "b"),
		".." + sep + "storex" + sep + "y" + sep: j("storex", "y"),
	} {
		if got, err := Resolve(in); err != nil || got != want {
			t.Errorf("in %s, Resolve(%q) = %q, %v; want %q", j("out"), in, got, err, want)
		}
	}
	if _, err := Resolve(""); err == nil {
		t.Error("Resolve(\"\") succeeded")
	}
}

func TestWithin(t *testing.T) {
	root := tree(t)
	j := func(names ...string) string { return filepath.Join(append([]string{root}, names...)...) }
	store := j("store")
	for _, c := range []struct {
		p, dir string
		want   bool
	}{
		{store, store, true},
		{j("store", "steps", "w"), store, true},
		{j("store") + string(filepath.Separator), store, true},
		{j("storex"), store, false},      // a longer name is not inside
		{j("storex", "a"), store, false}, //
		{j("out"), store, false},
		{j("out", "in", "a", "b"), store, true}, // through a link, parents absent
		{j("abs", "new", "deeper"), store, true},
		{j("into"), store, true},                     // a link to nothing in the store
		{j("out", "in", "..", "out"), store, false},  // ".." after the link
		{j("store", "..", "storex"), store, false},   // ".." out of it
		{j("nope", "..", "abs", "x"), store, true},   // ".." back over an absent name
		{store, j("out", "in", "steps"), false},      // the store is not inside its steps
		{store, j("out", "in"), true},                // a directory given through a link
		{j("store", "steps"), j("abs", "."), true},   //
		{j("deep", "a"), j("out", "sub"), true},      // a link to what does not exist yet
		{j("loop", "x"), j("loop"), true},            // a loop: as written
		{j("out"), string(filepath.Separator), true}, // everything is inside the root
		{"", store, false},
		{store, "", false},
	} {
		if got := Within(c.p, c.dir); got != c.want {
			t.Errorf("Within(%q, %q) = %v; want %v", c.p, c.dir, got, c.want)
		}
	}
	t.Chdir(j("out"))
	if !Within("in"+string(filepath.Separator)+"x", store) || Within(".", store) || !Within(store, "..") {
		t.Error("relative paths are not taken from the current directory")
	}
	// Case: one name on Windows and macOS, two elsewhere.
	if foldCase && !Within(j("STORE", "x"), store) {
		t.Errorf("on %s, %s is not found inside %s", runtime.GOOS, j("STORE", "x"), store)
	}
	if !foldCase && Within(j("STORE", "x"), store) {
		t.Errorf("on %s, %s is taken for inside %s", runtime.GOOS, j("STORE", "x"), store)
	}
}

// FuzzWithin checks, on paths built from fuzzed names over the tree of
// links above, what must hold whatever the path: a resolved path is
// clean, absolute and resolves to itself; a path is within itself and
// its parent; and Within agrees with comparing the resolved strings.
func FuzzWithin(f *testing.F) {
	for _, s := range []string{"store/steps", "out/in/../x", "abs/a", "into", "loop/loop", "storex", "../..", "nope/../abs", "deep/./y//"} {
		f.Add(s, "store")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if strings.ContainsRune(a+b, 0) || len(a) > 200 || len(b) > 200 {
			return
		}
		root := tree(t)
		pa, pb := filepath.Join(root, "out")+string(filepath.Separator)+a, root+string(filepath.Separator)+b
		ra, err := Resolve(pa)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", pa, err)
		}
		rb, err := Resolve(pb)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", pb, err)
		}
		if !filepath.IsAbs(ra) || filepath.Clean(ra) != ra {
			t.Fatalf("Resolve(%q) = %q: not clean and absolute", pa, ra)
		}
		if again, _ := Resolve(ra); again != ra {
			t.Fatalf("Resolve(%q) = %q, but Resolve(%q) = %q", pa, ra, ra, again)
		}
		if !Within(pa, pa) || !Within(pa, ra) || !Within(ra, pa) {
			t.Fatalf("%q is not within itself", pa)
		}
		if parent := filepath.Dir(ra); !Within(pa, parent) {
			t.Fatalf("%q is not within %q", pa, parent)
		}
		sep := string(filepath.Separator)
		same := func(x, y string) bool {
			if foldCase {
				return strings.EqualFold(x, y)
			}
			return x == y
		}
		want := same(ra, rb) || (len(ra) > len(rb) && same(ra[:len(rb)], rb) && (strings.HasSuffix(rb, sep) || ra[len(rb):len(rb)+1] == sep))
		if got := Within(pa, pb); got != want {
			t.Fatalf("Within(%q, %q) = %v; resolved %q and %q", pa, pb, got, ra, rb)
		}
	})
}
