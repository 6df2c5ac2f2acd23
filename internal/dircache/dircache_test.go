package dircache

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/manifest/tree"
)

func blobRef(s string) tree.Ref {
	return tree.Ref{Kind: tree.Blob, ID: cas.Sum([]byte(s)), Size: int64(len(s))}
}

// stat returns stat data older than any cache start in these tests.
func stat(size int64) tree.FileStat {
	return tree.FileStat{Size: size, Mtime: 1_600_000_000_123_456_789, Ctime: 1_600_000_000_223_456_789, Inode: 42, Dev: 7, Mode: 0o644}
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c", "x.dircache")
	c := Open(path, "store\x00s\x00/dir")
	if c.Ignored != "" {
		t.Fatalf("no file, yet ignored: %s", c.Ignored)
	}
	c.SetFile("a/b.txt", stat(3), blobRef("abc"))
	c.SetDir("a", 1, tree.Ref{Kind: tree.Node, ID: cas.Sum([]byte("a")), Size: 1})
	c.SetFile("tiny", stat(2), tree.Ref{Kind: tree.Inline, Data: []byte("hi")})
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	d := Open(path, "store\x00s\x00/dir")
	defer d.Discard()
	if d.Ignored != "" {
		t.Fatalf("ignored: %s", d.Ignored)
	}
	if st, ref, ok := d.File("a/b.txt"); !ok || st != stat(3) || !ref.Equal(blobRef("abc")) {
		t.Errorf("File = %v %v %v", st, ref, ok)
	}
	if _, n, ok := d.Dir("a"); !ok || n != 1 {
		t.Errorf("Dir = %d %v", n, ok)
	}
	if _, _, ok := d.File("a"); ok {
		t.Error("a directory's record answered as a file's")
	}
	if _, _, ok := d.Dir("a/b.txt"); ok {
		t.Error("a file's record answered as a directory's")
	}
	if _, ref, ok := d.File("tiny"); !ok || string(ref.Data) != "hi" {
		t.Errorf("inline ref: %v %v", ref, ok)
	}
	// Nothing else is left in the directory: the temporary file became
	// the cache, and d's is removed by Discard.
	d.Discard()
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("cache directory holds %d files, want 1", len(ents))
	}
}

// TestRacyNotRecorded checks git's rule: stat data whose mtime or ctime
// is not strictly older than the build's start is not recorded, so the
// file is read again next time.
func TestRacyNotRecorded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.dircache")
	c := Open(path, "k")
	if c.start == 0 {
		t.Fatal("no start time")
	}
	old := stat(1)
	sameTick := old
	sameTick.Mtime = c.start
	newCtime := old
	newCtime.Ctime = c.start + 1
	c.SetFile("old", old, blobRef("1"))
	c.SetFile("same-tick", sameTick, blobRef("2"))
	c.SetFile("new-ctime", newCtime, blobRef("3"))
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	d := Open(path, "k")
	defer d.Discard()
	if _, _, ok := d.File("old"); !ok {
		t.Error("an old file was not recorded")
	}
	for _, p := range []string{"same-tick", "new-ctime"} {
		if _, _, ok := d.File(p); ok {
			t.Errorf("%s: racy stat data was recorded", p)
		}
	}
}

func TestRacyGranularity(t *testing.T) {
	start := int64(1_700_000_010_500_000_000)
	for _, tc := range []struct {
		name         string
		mtime, ctime int64
		racy         bool
	}{
		{"ns, older", start - 1, start - 1, false},
		{"ns, equal", start, start - 5, true},
		{"ns, ctime newer", start - 5, start + 5, true},
		// Whole seconds: a filesystem that may round to 2 s.
		{"s, 3 s older", 1_700_000_007e9, 1_700_000_007e9, false},
		{"s, same second", 1_700_000_010e9, 1_700_000_010e9, true},
		{"s, 2 s older", 1_700_000_008e9, 1_700_000_008e9, true},
	} {
		st := tree.FileStat{Mtime: tc.mtime, Ctime: tc.ctime}
		if got := Racy(st, start); got != tc.racy {
			t.Errorf("%s: Racy = %v, want %v", tc.name, got, tc.racy)
		}
	}
}

// TestBadFilesIgnored checks that a cache file is used only if it is
// whole and was written for the same key; anything else is ignored,
// never an error, and rebuilt by the next Save.
func TestBadFilesIgnored(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.dircache")
	c := Open(path, "store-a\x00s\x00/d")
	c.SetFile("f", stat(1), blobRef("1"))
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 1
	newer := bytes.Clone(good)
	newer[len(magic)] = version + 1
	for name, data := range map[string][]byte{
		"truncated": good[:len(good)-5],
		"garbage":   []byte("this is not a cache file at all, not even close to one"),
		"empty":     {},
		"flipped":   flipped,
		"newer":     newer,
		"too large": append(bytes.Clone(good), make([]byte, MaxSize)...),
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		d := Open(path, "store-a\x00s\x00/d")
		if _, _, ok := d.File("f"); ok || d.Ignored == "" {
			t.Errorf("%s: cache used (ignored: %q)", name, d.Ignored)
		}
		d.SetFile("f", stat(1), blobRef("1"))
		if err := d.Save(); err != nil {
			t.Fatalf("%s: rebuild: %v", name, err)
		}
		if e := Open(path, "store-a\x00s\x00/d"); e.Ignored != "" {
			t.Errorf("%s: rebuilt cache ignored: %s", name, e.Ignored)
		} else {
			e.Discard()
		}
	}
	for _, key := range []string{"store-b\x00s\x00/d", "store-a\x00t\x00/d", "store-a\x00s\x00/e"} {
		d := Open(path, key)
		if _, _, ok := d.File("f"); ok {
			t.Errorf("cache for another key %q used", key)
		}
		d.Discard()
	}
}

// TestUnwritable checks that a cache that cannot be written records
// nothing and does not fail.
func TestUnwritable(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c := Open(filepath.Join(blocker, "x.dircache"), "k")
	c.SetFile("f", stat(1), blobRef("1"))
	if err := c.Save(); err != nil {
		t.Errorf("Save of an unwritable cache: %v", err)
	}
}

// FuzzDecode feeds the cache file decoder arbitrary bytes, both as a
// whole file and as the part after the checksum guards it: it must not
// panic, and whatever it accepts must survive encoding unchanged.
func FuzzDecode(f *testing.F) {
	recs := []pathRecord{
		{"a", record{dir: true, entries: 2, ref: tree.Ref{Kind: tree.Node, ID: cas.Sum([]byte("a")), Size: 2}}},
		{"a/b", record{st: stat(3), ref: blobRef("abc")}},
		{"a/c", record{st: stat(2), ref: tree.Ref{Kind: tree.Inline, Data: []byte("hi")}}},
		{"zzzzz", record{st: stat(0), ref: tree.Ref{Kind: tree.Inline}}},
	}
	whole := encode("store\x00session\x00/dir", recs)
	f.Add(whole)
	f.Add(whole[len(magic)+1 : len(whole)-cas.IDSize])
	f.Add(encode("", nil))
	f.Add([]byte("CRDC\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(key string, recs []pathRecord, err error) {
			if err != nil {
				if !errors.Is(err, errBad) && !errors.Is(err, cas.ErrCorrupt) {
					t.Fatalf("error %v is not a malformed-cache error", err)
				}
				return
			}
			k2, r2, err := decode(encode(key, recs))
			if err != nil || k2 != key || len(r2) != len(recs) || (len(recs) > 0 && !reflect.DeepEqual(r2, recs)) {
				t.Fatalf("accepted cache does not survive encoding: %v", err)
			}
		}
		check(decode(data))
		check(decodeBody(data))
	})
}

// TestLookupAnyOrder: records are found whatever order a build asks for
// them in (the lookup guesses the record after the last one found), the
// records a build sets in its own order are saved sorted, and a path set
// twice keeps its last record.
func TestLookupAnyOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.dircache")
	c := Open(path, "k")
	names := []string{"b/z", "a", "b", "a.b", "a/b", "b/a", "a-c"}
	for i, n := range names {
		c.SetFile(n, stat(int64(i)), blobRef(n))
	}
	c.SetFile("a", stat(99), blobRef("a"))
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c = Open(path, "k")
	defer c.Discard()
	for _, order := range [][]string{names, {"a-c", "a.b", "a/b", "b/z", "b", "b/a", "a"}} {
		for _, n := range order {
			st, ref, ok := c.File(n)
			want := int64(slices.Index(names, n))
			if n == "a" {
				want = 99
			}
			if !ok || st != stat(want) || !ref.Equal(blobRef(n)) {
				t.Errorf("File(%q) = %v, %v, %v; want stat(%d)", n, st, ref, ok, want)
			}
		}
	}
	for _, n := range []string{"", "a/", "c", "b/y"} {
		if _, _, ok := c.File(n); ok {
			t.Errorf("File(%q) found a record", n)
		}
	}
}

// TestInPlace: Save rewrites the cache file in place (no temporary file
// is left beside it), a shorter cache is cut to its length, Discard
// leaves the old file as it was (and removes the empty one a first Open
// made), and the build's start is the filesystem's time, not older than
// a file written before Open.
func TestInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.dircache")
	before := filepath.Join(dir, "before")
	if err := os.WriteFile(before, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(before)
	if err != nil {
		t.Fatal(err)
	}
	c := Open(path, "k")
	if c.start < fi.ModTime().UnixNano() {
		t.Errorf("start %d is older than a file written before Open (%d)", c.start, fi.ModTime().UnixNano())
	}
	c.Discard()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a discarded first build left a cache file: %v", err)
	}

	c = Open(path, "k")
	for i := range 50 {
		c.SetFile(fmt.Sprintf("f%04d", i), stat(int64(i)), blobRef(fmt.Sprint(i)))
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	long, _ := os.ReadFile(path)
	c = Open(path, "k")
	c.SetFile("f000", stat(0), blobRef("0"))
	c.Discard()
	if got, _ := os.ReadFile(path); !bytes.Equal(got, long) {
		t.Error("Discard changed the cache file")
	}
	c = Open(path, "k")
	c.SetFile("f000", stat(0), blobRef("0"))
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	short, _ := os.ReadFile(path)
	if len(short) >= len(long) {
		t.Fatalf("cache of 1 record is %d bytes, of 50 %d", len(short), len(long))
	}
	c = Open(path, "k")
	defer c.Discard()
	if _, _, ok := c.File("f000"); !ok || c.Ignored != "" {
		t.Errorf("rewritten cache not used: %q", c.Ignored)
	}
	if _, _, ok := c.File("f001"); ok {
		t.Error("a record of the longer old cache survived")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d files in the cache directory, want the cache and one other", len(ents))
	}

	// A write torn between two caches (the new one's start over the old
	// one's tail) is ignored.
	torn := append(bytes.Clone(short), long[len(short):]...)
	if err := os.WriteFile(path, torn, 0o600); err != nil {
		t.Fatal(err)
	}
	if d := Open(path, "k"); d.Ignored == "" {
		t.Error("a torn cache file was used")
	} else {
		d.Discard()
	}
}

// TestKeptMergedWithChanges: a build that sets most records again
// unchanged, changes some, adds some and drops some saves exactly its
// own records in path order, as if each had been written afresh; a
// record set again differently after being kept takes the new value.
func TestKeptMergedWithChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.dircache")
	const key = "k"
	c := Open(path, key)
	for i := range 1000 {
		c.SetFile(fmt.Sprintf("f%04d", i), stat(int64(i)), blobRef(fmt.Sprint(i)))
	}
	c.SetDir("", 1000, tree.Ref{Kind: tree.Node, ID: cas.Sum([]byte("root")), Size: 1000})
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	d := Open(path, key)
	want := map[string]string{}
	for i := range 1000 {
		p := fmt.Sprintf("f%04d", i)
		d.File(p)
		switch {
		case i%50 == 7: // removed: not set
		case i%40 == 3: // changed
			d.SetFile(p, stat(int64(1000+i)), blobRef(fmt.Sprint(i)))
			want[p] = fmt.Sprint(1000 + i)
		default:
			d.SetFile(p, stat(int64(i)), blobRef(fmt.Sprint(i)))
			want[p] = fmt.Sprint(i)
		}
		if i%60 == 5 { // a new file after it
			q := p + "-new"
			d.SetFile(q, stat(int64(2000+i)), blobRef(q))
			want[q] = fmt.Sprint(2000 + i)
		}
	}
	d.SetFile("f0010", stat(3000), blobRef("f0010")) // set again, differently
	want["f0010"] = "3000"
	// Set differently, then as it was: in next and kept both; next's wins.
	d.SetFile("f0030", stat(3001), blobRef("f0030"))
	d.SetFile("f0030", stat(30), blobRef("30"))
	want["f0030"] = "3001"
	if err := d.Save(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k, recs, err := decode(data)
	if err != nil || k != key {
		t.Fatalf("decode: %q %v", k, err)
	}
	if len(recs) != len(want) {
		t.Fatalf("saved %d records, want %d", len(recs), len(want))
	}
	for i, r := range recs {
		if i > 0 && recs[i-1].path >= r.path {
			t.Fatalf("records out of order at %s", r.path)
		}
		if w, ok := want[r.path]; !ok || fmt.Sprint(r.st.Size) != w {
			t.Fatalf("%s saved with size %d, want %q", r.path, r.st.Size, w)
		}
	}
	// The whole file is what encode would write for those records.
	if !bytes.Equal(data, encode(key, recs)) {
		t.Fatal("the file written through the buffer differs from encode's")
	}
}
