package headcache

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/internal/cachedir"
	"github.com/cairnlog/cairn/manifest"
)

func sample(n uint64) *Head {
	mb := []byte("CRNM manifest bytes of a step")
	return &Head{
		Number: n, Stamp: "14:1700000000123456789", Manifest: mb, ID: cas.Sum(mb),
		Objects: []manifest.IndexObject{
			{Key: "packs/s/00000000000000000032", Bytes: 300, Entries: []pack.Entry{
				{ID: cas.Sum([]byte("a")), Offset: 10, StoredLen: 100, RawLen: 120},
				{ID: cas.Sum([]byte("b")), Offset: 110, StoredLen: 200, RawLen: 200},
			}},
			{Key: "steps/s/00000000000000000033", Bytes: 0, Entries: []pack.Entry{}},
		},
	}
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "heads", FileName("k"))
	if h, why := Load(path, "k"); h != nil || why != "" {
		t.Fatalf("no file: Load = %v, %q", h, why)
	}
	want := sample(33)
	if _, err := Save(path, "k", want); err != nil {
		t.Fatal(err)
	}
	got, why := Load(path, "k")
	if got == nil || got.Base == nil {
		t.Fatalf("Load = %+v, %q; want a head with its base", got, why)
	}
	got.Base = nil
	if why != "" || !reflect.DeepEqual(got, want) {
		t.Fatalf("Load = %+v, %q; want %+v", got, why, want)
	}
	if h, why := Load(path, "other"); h != nil || why == "" {
		t.Fatalf("a file written for another key was used: %v %q", h, why)
	}
	// Nothing but the head file and its base is left in the directory.
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 2 {
		t.Fatalf("directory holds %d entries", len(ents))
	}
}

// TestSaveKeepsNewer: of two processes that committed one after the
// other, the later step's cache survives whichever saves last, unless
// the session's stamp changed (a rebuilt store starts again from 1).
func TestSaveKeepsNewer(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName("k"))
	if _, err := Save(path, "k", sample(34)); err != nil {
		t.Fatal(err)
	}
	if _, err := Save(path, "k", sample(33)); err != nil {
		t.Fatal(err)
	}
	if h, _ := Load(path, "k"); h == nil || h.Number != 34 {
		t.Fatalf("an older step replaced a newer one: %+v", h)
	}
	rebuilt := sample(1)
	rebuilt.Stamp = "14:1800000000000000000"
	if _, err := Save(path, "k", rebuilt); err != nil {
		t.Fatal(err)
	}
	if h, _ := Load(path, "k"); h == nil || h.Number != 1 {
		t.Fatalf("the head of a new session under a new stamp was not saved: %+v", h)
	}
}

// TestSaveReplacesDamagedNewer: a file whose header names a newer step
// but whose body is damaged does not stop a save (Save reads only the
// header first, and the whole file before keeping it).
func TestSaveReplacesDamagedNewer(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName("k"))
	newer, ok := encode("k", sample(34), nil, sample(34).Objects)
	if !ok {
		t.Fatal("sample does not encode")
	}
	newer[len(newer)-5] ^= 1
	if err := os.WriteFile(path, newer, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Save(path, "k", sample(33)); err != nil {
		t.Fatal(err)
	}
	if h, why := Load(path, "k"); h == nil || h.Number != 33 {
		t.Fatalf("a damaged newer file was kept: %+v, %q", h, why)
	}
	// A whole file that names a newer step still wins (TestSaveKeepsNewer),
	// and one for another key does not.
	other, _ := encode("other", sample(40), nil, sample(40).Objects)
	if err := os.WriteFile(path, other, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Save(path, "k", sample(33)); err != nil {
		t.Fatal(err)
	}
	if h, _ := Load(path, "k"); h == nil || h.Number != 33 {
		t.Fatalf("another key's newer file was kept: %+v", h)
	}
}

// TestBadFilesIgnored: every kind of damage makes Load report a reason
// and return no head.
func TestBadFilesIgnored(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName("k"))
	good, ok := encode("k", sample(3), nil, sample(3).Objects)
	if !ok {
		t.Fatal("sample does not encode")
	}
	cases := map[string][]byte{
		"empty":     {},
		"magic":     append([]byte("XXXX"), good[4:]...),
		"version":   append(append([]byte(magic), 9), good[5:]...),
		"flipped":   func() []byte { b := append([]byte(nil), good...); b[len(b)/2] ^= 1; return b }(),
		"truncated": good[:len(good)-1],
		"oversized": append(append([]byte(nil), good...), make([]byte, MaxSize)...),
	}
	for name, data := range cases {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if h, why := Load(path, "k"); h != nil || why == "" {
			t.Errorf("%s: Load = %v, %q", name, h, why)
		}
	}
}

// TestTooLargeNotSaved: a head past the bounds is not cached, and an
// old file is removed so that it cannot serve a later commit.
func TestTooLargeNotSaved(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName("k"))
	if _, err := Save(path, "k", sample(3)); err != nil {
		t.Fatal(err)
	}
	big := sample(4)
	big.Objects = make([]manifest.IndexObject, MaxObjects+1)
	if _, err := Save(path, "k", big); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a stale cache file outlived a head too large to cache: %v", err)
	}
}

// FuzzDecode feeds the cache file decoders (head files and base files)
// arbitrary bytes, both as a whole file and as the part after the
// checksum guards it: they must not panic, whatever they accept must
// survive encoding unchanged, and the header decoder must agree with the
// whole one.
func FuzzDecode(f *testing.F) {
	h := sample(33)
	whole, _ := encode("store\x00session", h, &Base{sum: cas.Sum([]byte("base"))}, h.Objects[1:])
	f.Add(whole)
	f.Add(whole[len(magic)+1 : len(whole)-cas.IDSize])
	base, _ := encodeBase("store\x00session", h.Objects)
	f.Add(base)
	f.Add(base[len(baseMagic)+1 : len(base)-cas.IDSize])
	empty, _ := encode("", &Head{}, nil, nil)
	f.Add(empty)
	f.Add([]byte("CRHC\x02"))
	f.Add([]byte("CRHB\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		bad := func(err error) bool {
			if err != nil && !errors.Is(err, errBad) {
				t.Fatalf("error %v is not a malformed-cache error", err)
			}
			return err != nil
		}
		checkHead := func(key string, h *Head, sum cas.ID, err error) {
			if bad(err) {
				return
			}
			var b *Base
			if sum != (cas.ID{}) {
				b = &Base{sum: sum}
			}
			again, ok := encode(key, h, b, h.Objects)
			if !ok {
				t.Fatal("accepted head file does not encode")
			}
			k2, h2, sum2, err := decode(again)
			if err != nil || k2 != key || sum2 != sum || !reflect.DeepEqual(h2, h) {
				t.Fatalf("accepted head file does not survive encoding: %v", err)
			}
		}
		checkBase := func(key string, objs []manifest.IndexObject, err error) {
			if bad(err) {
				return
			}
			again, ok := encodeBase(key, objs)
			if !ok {
				t.Fatal("accepted base file does not encode")
			}
			k2, objs2, err := decodeBase(again)
			if err != nil || k2 != key || !reflect.DeepEqual(objs2, objs) {
				t.Fatalf("accepted base file does not survive encoding: %v", err)
			}
		}
		checkHead(decode(data))
		checkHead(decodeBody(data))
		checkBase(decodeBase(data))
		checkBase(decodeBaseBody(data))
		// The header Save reads agrees with the whole decode.
		hk, hn, hs, herr := decodeHeader(data)
		if k, h, _, err := decode(data); err == nil && (herr != nil || hk != k || hn != h.Number || hs != h.Stamp) {
			t.Fatalf("header %q %d %q %v disagrees with the file", hk, hn, hs, herr)
		}
		// Save's first look at the header agrees with the verified one.
		if herr == nil && hn > 0 {
			probe := &Head{Number: hn - 1, Stamp: hs}
			if !newer(data[:min(len(data), maxHeader)], hk, probe) || !newerVerified(data, hk, probe) {
				t.Fatalf("a verified header naming step %d is not newer than %d", hn, hn-1)
			}
		}
	})
}

// TestPrune: a new cache file that takes the directory past its bound
// removes the least recently written ones (internal/cachedir's rule), and
// the in-flight files of processes that are gone (this package's).
func TestPrune(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-2 * time.Hour)
	var paths []string
	for i, k := range []string{"a", "b", "c"} {
		p := filepath.Join(dir, FileName(k))
		if _, err := Save(p, k, sample(uint64(i+1))); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{p, basePath(p)} {
			os.Chtimes(f, old.Add(time.Duration(i)*time.Minute), old.Add(time.Duration(i)*time.Minute))
		}
		paths = append(paths, p)
	}
	fi, _ := os.Stat(paths[0])
	bi, _ := os.Stat(basePath(paths[0]))
	// A process id that cannot be alive: beyond Linux's pid_max.
	dead := inflight(paths[0], 1<<23)
	live := inflight(paths[0], os.Getpid())
	for _, f := range []string{dead, live} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d := cachedir.Dir{Path: dir, Suffix: suffix, MaxBytes: 2 * (fi.Size() + bi.Size()), Stale: deadInflight}
	d.Prune()
	for i, p := range paths {
		for _, f := range []string{p, basePath(p)} {
			_, err := os.Stat(f)
			if gone := errors.Is(err, os.ErrNotExist); gone != (i == 0) {
				t.Errorf("%s of head %d: removed %v", filepath.Base(f), i, gone)
			}
		}
	}
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Error("a dead process's in-flight file was kept")
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live process's in-flight file was removed: %v", err)
	}
}

// TestBaseKept: a save keeps the base file while it describes objects of
// the head, writing only the head file with the objects the base lacks;
// a base object gone from the layout, or too many blobs beside the base,
// makes it write the base again. Load always gives the whole index.
func TestBaseKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName("k"))
	h := sample(33)
	b1, err := Save(path, "k", h)
	if err != nil || b1 == nil {
		t.Fatalf("Save = %v, %v", b1, err)
	}
	baseData := func() []byte {
		data, err := os.ReadFile(basePath(path))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	first := baseData()
	step := func(n uint64, objs []manifest.IndexObject, base *Base) (*Head, *Base) {
		h := sample(n)
		h.Objects, h.Base = objs, base
		b, err := Save(path, "k", h)
		if err != nil {
			t.Fatal(err)
		}
		got, why := Load(path, "k")
		if got == nil || !reflect.DeepEqual(got.Objects, objs) {
			t.Fatalf("step %d: Load = %+v, %q; want objects %+v", n, got, why, objs)
		}
		return got, b
	}
	// A new object beside the base: the head file alone is written.
	objs := append(slices.Clone(h.Objects), manifest.IndexObject{Key: "steps/s/00000000000000000034", Bytes: 5, Entries: []pack.Entry{{ID: cas.Sum([]byte("c")), StoredLen: 5, RawLen: 5}}})
	got, b2 := step(34, objs, b1)
	if b2 != b1 || !bytes.Equal(baseData(), first) {
		t.Fatal("the base was written again though it still held objects of the head")
	}
	if data, _ := os.ReadFile(path); true {
		_, own, _, err := decode(data)
		if err != nil || !reflect.DeepEqual(own.Objects, objs[len(objs)-1:]) {
			t.Fatalf("head file holds %+v (%v), want only the object the base lacks", own, err)
		}
	}
	// A base object merged away: the base is written again.
	objs = objs[1:]
	_, b3 := step(35, objs, got.Base)
	if b3 == b2 || bytes.Equal(baseData(), first) {
		t.Fatal("the base still names an object gone from the layout")
	}
	// Too many blobs beside the base: written again.
	big := manifest.IndexObject{Key: "steps/s/00000000000000000036"}
	for i := range maxOwnEntries + 1 {
		big.Entries = append(big.Entries, pack.Entry{ID: cas.Sum(fmt.Appendf(nil, "%d", i)), Offset: int64(i), StoredLen: 1, RawLen: 1})
	}
	before := baseData()
	_, b4 := step(36, append(slices.Clone(objs), big), b3)
	if b4 == b3 || bytes.Equal(baseData(), before) {
		t.Fatal("the base was kept beside more than maxOwnEntries blobs")
	}
	// A head file beside a base it does not name is ignored.
	if err := os.WriteFile(basePath(path), first, 0o600); err != nil {
		t.Fatal(err)
	}
	if h, why := Load(path, "k"); h != nil || why == "" {
		t.Fatalf("a head beside another base was used: %q", why)
	}
	// So is one whose base is gone.
	os.Remove(basePath(path))
	if h, why := Load(path, "k"); h != nil || why == "" {
		t.Fatalf("a head without its base was used: %q", why)
	}
}
