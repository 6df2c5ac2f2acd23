package tree_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/manifest/tree"
)

// makeDir creates the fixed directory of tree-dir.golden under root.
func makeDir(t *testing.T, root string) {
	t.Helper()
	write := func(name string, data []byte, perm os.FileMode) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, perm); err != nil { // umask-proof
			t.Fatal(err)
		}
	}
	write("a.txt", []byte("hello\n"), 0o644)
	write("run.sh", []byte("#!/bin/sh\necho ok\n"), 0o755)
	write("notes.md", []byte(strings.Repeat("notes about the plan\n", 10)), 0o600)
	write("sub/state.json", []byte(`{"step":3,"plan":["a","b"]}`), 0o644)
	write("sub/deeper/empty", nil, 0o644)
	write("big.bin", seeded(200<<10, 42), 0o644)
	if err := os.Mkdir(filepath.Join(root, "emptydir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../a.txt", filepath.Join(root, "sub", "up")); err != nil {
		t.Fatal(err)
	}
}

func buildDir(t *testing.T, s *memStore, root string) tree.Ref {
	t.Helper()
	ref, err := tree.BuildDir(root, s)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// TestGoldenDir pins the directory encoding: names, modes, symlinks,
// nesting and the chunking of a 200 KiB file.
func TestGoldenDir(t *testing.T) {
	root := t.TempDir()
	makeDir(t, root)
	s := newMemStore()
	ref := buildDir(t, s, root)
	checkGolden(t, "tree-dir.golden", goldenListing(s, ref))
}

func TestDirRoundTrip(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	makeDir(t, src)
	s := newMemStore()
	ref := buildDir(t, s, src)
	r := &tree.Reader{Src: s}

	var paths []string
	err := r.WalkDir(ctx, ref, func(fi tree.FileInfo) error {
		paths = append(paths, fi.Path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.txt", "big.bin", "emptydir", "link", "notes.md", "run.sh", "sub", "sub/deeper", "sub/deeper/empty", "sub/state.json", "sub/up"}
	if !slices.Equal(paths, want) {
		t.Errorf("WalkDir paths = %q, want %q", paths, want)
	}

	dst := filepath.Join(t.TempDir(), "out")
	if err := r.Checkout(ctx, ref, dst); err != nil {
		t.Fatal(err)
	}
	for _, p := range want {
		a, b := filepath.Join(src, p), filepath.Join(dst, p)
		ia, err := os.Lstat(a)
		if err != nil {
			t.Fatal(err)
		}
		ib, err := os.Lstat(b)
		if err != nil {
			t.Errorf("%s missing after checkout: %v", p, err)
			continue
		}
		if ia.Mode().Type() != ib.Mode().Type() {
			t.Errorf("%s: type %v, want %v", p, ib.Mode().Type(), ia.Mode().Type())
		}
		switch {
		case ia.Mode()&os.ModeSymlink != 0:
			la, _ := os.Readlink(a)
			lb, _ := os.Readlink(b)
			if la != lb {
				t.Errorf("%s: link %q, want %q", p, lb, la)
			}
		case ia.Mode().IsRegular():
			da, _ := os.ReadFile(a)
			db, _ := os.ReadFile(b)
			if !bytes.Equal(da, db) {
				t.Errorf("%s: content differs", p)
			}
			if got, want := ib.Mode()&0o111 != 0, ia.Mode()&0o111 != 0; got != want {
				t.Errorf("%s: executable = %v, want %v", p, got, want)
			}
		}
	}
	// Building the checkout gives the same root.
	if again := buildDir(t, s, dst); !again.Equal(ref) {
		t.Error("rebuilding the checkout gives a different root")
	}
}

func TestDiffDir(t *testing.T) {
	ctx := context.Background()
	a, b := t.TempDir(), t.TempDir()
	makeDir(t, a)
	makeDir(t, b)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(b, "a.txt"), []byte("changed\n"), 0o644))
	must(os.Remove(filepath.Join(b, "notes.md")))
	must(os.WriteFile(filepath.Join(b, "sub", "deeper", "new"), []byte("new"), 0o644))
	must(os.Chmod(filepath.Join(b, "sub", "state.json"), 0o755))
	big := seeded(200<<10, 42)
	big[100<<10] ^= 1
	must(os.WriteFile(filepath.Join(b, "big.bin"), big, 0o644))
	must(os.Remove(filepath.Join(b, "link")))
	must(os.Symlink("run.sh", filepath.Join(b, "link")))

	s := newMemStore()
	ra, rb := buildDir(t, s, a), buildDir(t, s, b)
	var got []string
	err := (&tree.Reader{Src: s}).DiffDir(ctx, ra, rb, func(c tree.Change) error {
		got = append(got, string(c.Kind)+" "+c.Path)
		return nil
	})
	must(err)
	want := []string{"changed a.txt", "changed big.bin", "changed link", "removed notes.md", "added sub/deeper/new", "changed sub/state.json"}
	if !slices.Equal(got, want) {
		t.Errorf("DiffDir =\n%q\nwant\n%q", got, want)
	}
	var none []string
	must((&tree.Reader{Src: s}).DiffDir(ctx, ra, ra, func(c tree.Change) error { none = append(none, c.Path); return nil }))
	if len(none) != 0 {
		t.Errorf("diff of a tree with itself: %q", none)
	}
}

func TestDirLimits(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	makeDir(t, src)
	s := newMemStore()
	ref := buildDir(t, s, src)
	r := &tree.Reader{Src: s, Limits: tree.Limits{MaxBytes: 100 << 10}}
	err := r.Checkout(ctx, ref, filepath.Join(t.TempDir(), "out"))
	if !errors.Is(err, tree.ErrLimit) {
		t.Errorf("checkout of a 200 KiB file with MaxBytes 100 KiB = %v, want ErrLimit", err)
	}
	r = &tree.Reader{Src: s, Limits: tree.Limits{MaxDepth: 1}}
	err = r.WalkDir(ctx, ref, func(tree.FileInfo) error { return nil })
	if !errors.Is(err, tree.ErrLimit) {
		t.Errorf("WalkDir of depth 2 with MaxDepth 1 = %v, want ErrLimit", err)
	}
}

func TestBuildDirErrors(t *testing.T) {
	if _, err := tree.BuildDir(filepath.Join(t.TempDir(), "absent"), newMemStore()); err == nil {
		t.Error("BuildDir of a missing directory succeeded")
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := tree.BuildDir(f, newMemStore()); err == nil {
		t.Error("BuildDir of a file succeeded")
	}
}

// hostileDir stores a directory node with one entry and returns its ref.
func hostileDir(s *memStore, entries ...tree.Entry) tree.Ref {
	return s.putNode(&tree.NodeData{Type: tree.TypeDir, Entries: entries}, int64(len(entries)))
}

func inline(s string) tree.Ref { return tree.Ref{Kind: tree.Inline, Data: []byte(s)} }

// TestCheckoutRefusesHostileTrees: names and symlinks read from a store
// must not let a checkout write outside its directory (invariant I6).
func TestCheckoutRefusesHostileTrees(t *testing.T) {
	ctx := context.Background()
	s := newMemStore()
	file := inline("pwned")
	sub := hostileDir(s, tree.Entry{Name: "x", Mode: tree.ModeFile, Ref: file})
	for name, ref := range map[string]tree.Ref{
		"dot-dot file":       hostileDir(s, tree.Entry{Name: "..", Mode: tree.ModeFile, Ref: file}),
		"dot-dot dir":        hostileDir(s, tree.Entry{Name: "..", Mode: tree.ModeDir, Ref: sub}),
		"dot dir":            hostileDir(s, tree.Entry{Name: ".", Mode: tree.ModeDir, Ref: sub}),
		"slash name":         hostileDir(s, tree.Entry{Name: "a/b", Mode: tree.ModeFile, Ref: file}),
		"escaping slashes":   hostileDir(s, tree.Entry{Name: "../../escaped", Mode: tree.ModeFile, Ref: file}),
		"absolute name":      hostileDir(s, tree.Entry{Name: "/tmp/escaped", Mode: tree.ModeFile, Ref: file}),
		"backslash name":     hostileDir(s, tree.Entry{Name: `..\x`, Mode: tree.ModeFile, Ref: file}),
		"empty name":         hostileDir(s, tree.Entry{Name: "", Mode: tree.ModeFile, Ref: file}),
		"nul name":           hostileDir(s, tree.Entry{Name: "a\x00b", Mode: tree.ModeFile, Ref: file}),
		"absolute symlink":   hostileDir(s, tree.Entry{Name: "l", Mode: tree.ModeSymlink, Ref: inline("/etc/passwd")}),
		"dot-dot symlink":    hostileDir(s, tree.Entry{Name: "l", Mode: tree.ModeSymlink, Ref: inline("../../x")}),
		"parent symlink":     hostileDir(s, tree.Entry{Name: "l", Mode: tree.ModeSymlink, Ref: inline("..")}),
		"nested escape":      hostileDir(s, tree.Entry{Name: "d", Mode: tree.ModeDir, Ref: hostileDir(s, tree.Entry{Name: "l", Mode: tree.ModeSymlink, Ref: inline("../../x")})}),
		"sneaky symlink":     hostileDir(s, tree.Entry{Name: "l", Mode: tree.ModeSymlink, Ref: inline("a/../../x")}),
		"empty symlink":      hostileDir(s, tree.Entry{Name: "l", Mode: tree.ModeSymlink, Ref: inline("")}),
		"duplicate file":     hostileDir(s, tree.Entry{Name: "f", Ref: file}, tree.Entry{Name: "f", Ref: file}),
		"file over symlink":  hostileDir(s, tree.Entry{Name: "l", Mode: tree.ModeSymlink, Ref: inline("f")}, tree.Entry{Name: "l", Ref: file}),
		"dir through link":   hostileDir(s, tree.Entry{Name: "l", Mode: tree.ModeSymlink, Ref: inline("sub")}, tree.Entry{Name: "l", Mode: tree.ModeDir, Ref: sub}),
		"dir in a file node": hostileDir(s, tree.Entry{Name: "d", Mode: tree.ModeDir, Ref: s.putNode(&tree.NodeData{Type: tree.TypeArray}, 0)}),
	} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			dst := filepath.Join(parent, "a", "b", "out")
			err := (&tree.Reader{Src: s}).Checkout(ctx, ref, dst)
			if err == nil {
				t.Errorf("Checkout succeeded")
			}
			checkContained(t, parent, dst)
		})
	}
}

// TestCheckoutSymlinkThroughSymlink: a symlink whose target is lexically
// inside the checkout ("s/..") can still point outside it when it goes
// through another symlink ("s" → "."): SafeSymlink cleans the path
// lexically, so "s/.." looks like "." while the kernel resolves it to the
// parent of the checkout directory.
func TestCheckoutSymlinkThroughSymlink(t *testing.T) {
	ctx := context.Background()
	s := newMemStore()
	ref := hostileDir(s,
		tree.Entry{Name: "s", Mode: tree.ModeSymlink, Ref: inline(".")},
		tree.Entry{Name: "t", Mode: tree.ModeSymlink, Ref: inline("s/..")},
		tree.Entry{Name: "u", Mode: tree.ModeSymlink, Ref: inline("s/../s/../..")},
	)
	parent := t.TempDir()
	dst := filepath.Join(parent, "out")
	err := (&tree.Reader{Src: s}).Checkout(ctx, ref, dst)
	checkContained(t, parent, dst)
	if err == nil {
		t.Log("Checkout succeeded; every symlink must then stay inside the checkout")
	}
}

// checkContained fails if anything exists under parent outside dst other
// than the directories leading to dst, or if any symlink under dst
// resolves outside dst.
func checkContained(t *testing.T, parent, dst string) {
	t.Helper()
	err := filepath.Walk(parent, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if p == parent || strings.HasPrefix(dst, p+string(filepath.Separator)) || p == dst || strings.HasPrefix(p, dst+string(filepath.Separator)) {
			return nil
		}
		t.Errorf("checkout wrote %s outside %s", p, dst)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	realDst, err := filepath.EvalSymlinks(dst)
	if err != nil {
		return // nothing was created
	}
	filepath.Walk(dst, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.Mode()&os.ModeSymlink == 0 {
			return nil
		}
		resolved, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil // dangling: it points nowhere yet, checked lexically by SafeSymlink
		}
		if resolved != realDst && !strings.HasPrefix(resolved, realDst+string(filepath.Separator)) {
			target, _ := os.Readlink(p)
			t.Errorf("symlink %s -> %q resolves to %s, outside the checkout %s", p, target, resolved, realDst)
		}
		return nil
	})
}
