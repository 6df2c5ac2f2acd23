package tree

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas"
)

// naiveDiffDir is the definition the diff of directories must keep: both
// directories' entries read whole, removed and changed ones in name
// order, then the added ones.
func naiveDiffDir(ctx context.Context, r *Reader, p string, a, b Ref, fn func(Change) error) error {
	if a.Equal(b) {
		return nil
	}
	ea, err := r.dirEntries(ctx, a, 0)
	if err != nil {
		return err
	}
	eb, err := r.dirEntries(ctx, b, 0)
	if err != nil {
		return err
	}
	bm := map[string]Entry{}
	for _, e := range eb {
		bm[e.Name] = e
	}
	for _, x := range ea {
		y, ok := bm[x.Name]
		ep := path.Join(p, x.Name)
		switch {
		case !ok:
			err = fn(Change{Path: ep, Kind: Removed})
		case x.Mode == ModeDir && y.Mode == ModeDir:
			err = naiveDiffDir(ctx, r, ep, x.Ref, y.Ref, fn)
		case x.Mode != y.Mode || !x.Ref.Equal(y.Ref):
			err = fn(Change{Path: ep, Kind: Changed})
		}
		if err != nil {
			return err
		}
		delete(bm, x.Name)
	}
	for _, y := range eb {
		if _, ok := bm[y.Name]; ok {
			if err := fn(Change{Path: path.Join(p, y.Name), Kind: Added}); err != nil {
				return err
			}
		}
	}
	return nil
}

// memDir stores files (slash path → content; content starting with '#'
// is executable) as a directory state, through putDir as a build does.
func memDir(t *testing.T, m *blobMap, files map[string]string) Ref {
	t.Helper()
	sub := map[string]map[string]string{}
	var entries []Entry
	for p, c := range files {
		if dir, rest, ok := strings.Cut(p, "/"); ok {
			if sub[dir] == nil {
				sub[dir] = map[string]string{}
			}
			sub[dir][rest] = c
			continue
		}
		mode := ModeFile
		if strings.HasPrefix(c, "#") {
			mode = ModeExec
		}
		entries = append(entries, Entry{Name: p, Mode: mode, Ref: Ref{Kind: Inline, Data: []byte(c)}})
	}
	for name, files := range sub {
		entries = append(entries, Entry{Name: name, Mode: ModeDir, Ref: memDir(t, m, files)})
	}
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	ref, err := putDir(m, entries)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// diffDirs stores both trees and returns the diff, the naive diff and
// the blobs the diff read.
func diffDirs(t *testing.T, a, b map[string]string) (got, want []string, reads int) {
	t.Helper()
	m := &blobMap{blobs: map[cas.ID][]byte{}}
	ra, rb := memDir(t, m, a), memDir(t, m, b)
	r := &Reader{Src: m}
	m.reads = 0
	if err := r.DiffDir(context.Background(), ra, rb, func(c Change) error {
		got = append(got, string(c.Kind)+" "+c.Path)
		return nil
	}); err != nil {
		t.Fatalf("DiffDir: %v", err)
	}
	reads = m.reads
	if err := naiveDiffDir(context.Background(), r, "", ra, rb, func(c Change) error {
		want = append(want, string(c.Kind)+" "+c.Path)
		return nil
	}); err != nil {
		t.Fatalf("whole listings: %v", err)
	}
	return got, want, reads
}

// TestDiffDirAgreesWithWholeListings checks the diff of directories,
// which steps over the runs of entries both share, against the diff of
// their whole listings: files added, removed, edited, made executable,
// replaced by a directory, in a large directory and in small nested ones.
func TestDiffDirAgreesWithWholeListings(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for trial := range 60 {
		n := []int{3, 60, 2500, 20000}[trial%4]
		files := map[string]string{}
		for i := range n {
			files[fmt.Sprintf("big/f%05d.txt", i)] = fmt.Sprintf("file %d", i)
		}
		for i := range 20 {
			files[fmt.Sprintf("sub/d%d/g%d", i%4, i)] = fmt.Sprintf("nested %d", i)
		}
		next := maps.Clone(files)
		keys := make([]string, 0, len(files))
		for k := range files {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for range 1 + r.IntN(6) {
			k := keys[r.IntN(len(keys))]
			if _, isDir := next[k+"/inside"]; isDir {
				continue // a file made a directory stays one
			}
			switch r.IntN(5) {
			case 0:
				delete(next, k)
			case 1:
				next[k] = "edited " + k
			case 2:
				next[k] = "#!/bin/sh executable"
			case 3:
				next[k+"x"] = "added"
			default:
				if _, ok := next[k]; ok {
					delete(next, k)
					next[k+"/inside"] = "a directory now"
				}
			}
		}
		got, want, _ := diffDirs(t, files, next)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: diff\n%q\nwant (whole listings)\n%q", trial, got, want)
		}
	}
}

// TestDiffDirLargeDirectoryReadsLittle: editing one file of a directory
// of 20,000 entries reads the nodes on its path, not the directory.
func TestDiffDirLargeDirectoryReadsLittle(t *testing.T) {
	files := map[string]string{}
	for i := range 20000 {
		files[fmt.Sprintf("f%05d", i)] = fmt.Sprintf("%d", i)
	}
	next := maps.Clone(files)
	next["f12345"] = "edited"
	got, naive, reads := diffDirs(t, files, next)
	if w := []string{"changed f12345"}; !slices.Equal(got, w) || !slices.Equal(naive, w) {
		t.Fatalf("diff %q, naive %q; want %q", got, naive, w)
	}
	if reads > 40 {
		t.Errorf("editing one file of a 20,000-entry directory read %d blobs; want the nodes of its path", reads)
	}
}

// TestDiffDirRefusesDisorderedEntries: a stored directory whose entries
// are out of order or repeated is corrupt, whichever side it is on.
func TestDiffDirRefusesDisorderedEntries(t *testing.T) {
	m := &blobMap{blobs: map[cas.ID][]byte{}}
	file := func(name string) Entry {
		return Entry{Name: name, Mode: ModeFile, Ref: Ref{Kind: Inline, Data: []byte(name)}}
	}
	good, err := putDir(m, []Entry{file("a"), file("b"), file("c")})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]Entry{{file("a"), file("c"), file("b")}, {file("a"), file("b"), file("b")}} {
		ref, err := putDir(m, bad)
		if err != nil {
			t.Fatal(err)
		}
		r := &Reader{Src: m}
		for _, pair := range [][2]Ref{{good, ref}, {ref, good}} {
			err := r.DiffDir(context.Background(), pair[0], pair[1], func(Change) error { return nil })
			if !errors.Is(err, cas.ErrCorrupt) {
				t.Errorf("diff with a directory of %v: %v, want ErrCorrupt", bad, err)
			}
		}
	}
}

// FuzzDiffDir: whatever the directories and their edits, the diff that
// steps over shared entries is the diff of the whole listings.
func FuzzDiffDir(f *testing.F) {
	f.Add(uint64(1), uint16(3000), []byte{0, 1, 2, 3, 4})
	f.Add(uint64(2), uint16(5), []byte{4, 4})
	f.Fuzz(func(t *testing.T, seed uint64, n uint16, ops []byte) {
		r := rand.New(rand.NewPCG(seed, 2))
		files := map[string]string{}
		for i := range int(n % 5000) {
			files[fmt.Sprintf("d%d/f%05d", r.IntN(3), i)] = fmt.Sprintf("%d", r.IntN(1000))
		}
		next := maps.Clone(files)
		keys := slices.Sorted(maps.Keys(files))
		for _, op := range ops[:min(len(ops), 10)] {
			if len(keys) == 0 {
				next["new"] = "x"
				continue
			}
			k := keys[r.IntN(len(keys))]
			if _, isDir := next[k+"/inside"]; isDir {
				continue
			}
			switch op % 5 {
			case 0:
				delete(next, k)
			case 1:
				next[k] = "edited"
			case 2:
				next[k] = "#exec"
			case 3:
				next[k+"y"] = "added"
			default:
				delete(next, k)
				next[k+"/inside"] = "dir"
			}
		}
		got, want, _ := diffDirs(t, files, next)
		if !slices.Equal(got, want) {
			t.Fatalf("diff\n%q\nwant (whole listings)\n%q", got, want)
		}
	})
}
