package pack_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
)

var update = flag.Bool("update", false, "rewrite testdata/pack.golden")

// goldenDir holds the golden files that pin the pack format.
var goldenDir = "testdata"

// seeded returns n pseudo-random (incompressible) bytes from a PCG seeded
// with seed. Its output is pinned by the golden file: do not change it.
func seeded(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x636169726e))
	b := make([]byte, (n+7)&^7)
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	return b[:n]
}

// fixedBlobs are the blobs of the golden pack: empty, tiny, just below
// and above the compression threshold, compressible text and
// incompressible random bytes.
func fixedBlobs() [][]byte {
	return [][]byte{
		{},
		[]byte("a"),
		[]byte(strings.Repeat("x", 63)),
		[]byte(strings.Repeat("y", 64)),
		[]byte(strings.Repeat(`{"role":"assistant","content":"hello"},`, 40)),
		seeded(100, 1),
		seeded(3000, 2),
	}
}

func buildFixed(kind byte, manifest []byte) ([]byte, []pack.Entry, [][]byte) {
	var b pack.Builder
	blobs := fixedBlobs()
	for _, raw := range blobs {
		b.Add(cas.Sum(raw), raw)
	}
	// A duplicate is ignored.
	b.Add(cas.Sum(blobs[4]), blobs[4])
	data, entries := b.Build(kind, manifest)
	return data, entries, blobs
}

// hexDump formats data as 32 bytes of hex per line.
func hexDump(data []byte) string {
	var s strings.Builder
	for i := 0; i < len(data); i += 32 {
		s.WriteString(hex.EncodeToString(data[i:min(i+32, len(data))]))
		s.WriteByte('\n')
	}
	return s.String()
}

func parseHexDump(t *testing.T, s string) []byte {
	t.Helper()
	var out []byte
	for _, line := range strings.Fields(s) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		b, err := hex.DecodeString(line)
		if err != nil {
			t.Fatalf("golden: %v", err)
		}
		out = append(out, b...)
	}
	return out
}

// TestGolden pins the step-object format. The bytes of a step object
// built from fixed blobs must not change; a change is a deliberate,
// versioned format change (run with -update and bump the version).
// Independently, the stored golden object must still parse and decode:
// that is the promise to objects already written.
func TestGolden(t *testing.T) {
	data, _, blobs := buildFixed(pack.KindStep, []byte("manifest bytes"))
	path := filepath.Join(goldenDir, "pack.golden")
	if *update {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
		text := "# cas/pack step object built from fixed blobs (see pack_test.go); hex, 32 bytes a line\n" + hexDump(data)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	want := parseHexDump(t, strings.SplitN(string(text), "\n", 2)[1])

	// Old objects stay readable.
	o, err := pack.Parse(want, "golden")
	if err != nil {
		t.Fatalf("parse golden object: %v", err)
	}
	if got, want := string(o.Manifest), "manifest bytes"; got != want {
		t.Errorf("manifest = %q, want %q", got, want)
	}
	if got, want := len(o.Entries), len(blobs); got != want {
		t.Fatalf("%d entries, want %d", got, want)
	}
	for i, e := range o.Entries {
		raw, err := o.Blob(e)
		if err != nil {
			t.Fatalf("blob %d: %v", i, err)
		}
		if !bytes.Equal(raw, blobs[i]) {
			t.Errorf("blob %d differs", i)
		}
	}
	// Codec choice is part of the format: raw below the threshold and for
	// random bytes, zstd for compressible text.
	for i, wantCodec := range []byte{pack.CodecRaw, pack.CodecRaw, pack.CodecRaw, pack.CodecZstd, pack.CodecZstd, pack.CodecRaw, pack.CodecRaw} {
		if got := o.Stored(o.Entries[i])[0]; got != wantCodec {
			t.Errorf("blob %d codec = %d, want %d", i, got, wantCodec)
		}
	}

	if !bytes.Equal(data, want) {
		t.Errorf("step object bytes differ from %s (%d bytes, want %d); a format change must be deliberate: run go test -update", path, len(data), len(want))
	}
}

func TestRoundTrip(t *testing.T) {
	for _, kind := range []byte{pack.KindStep, pack.KindPack} {
		var manifest []byte
		if kind == pack.KindStep {
			manifest = []byte("m")
		}
		data, entries, blobs := buildFixed(kind, manifest)
		o, err := pack.Parse(data, "obj")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := o.Kind, kind; got != want {
			t.Errorf("kind = %q, want %q", got, want)
		}
		if got, want := o.Size(), int64(len(data)); got != want {
			t.Errorf("size = %d, want %d", got, want)
		}
		if got, want := fmt.Sprint(o.Entries), fmt.Sprint(entries); got != want {
			t.Errorf("parsed entries differ from built entries:\n%s\n%s", got, want)
		}
		for i, e := range o.Entries {
			raw, err := o.Blob(e)
			if err != nil || !bytes.Equal(raw, blobs[i]) {
				t.Errorf("blob %d: %v", i, err)
			}
		}
		// A header-only parse sees the same index but cannot read blobs.
		h, err := pack.ParseHeader(data, "obj")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fmt.Sprint(h.Entries), fmt.Sprint(entries); got != want {
			t.Errorf("header entries differ")
		}
		if _, err := h.Blob(h.Entries[0]); err == nil {
			t.Error("Blob on a header-only object succeeded")
		}
		// Every prefix shorter than the header is ErrShort.
		hdrLen := int(entries[0].Offset)
		for n := 0; n < hdrLen; n++ {
			if _, err := pack.ParseHeader(data[:n], "obj"); !errors.Is(err, pack.ErrShort) {
				t.Fatalf("ParseHeader of %d/%d header bytes: %v, want ErrShort", n, hdrLen, err)
			}
		}
	}
}

func TestEmptyObject(t *testing.T) {
	var b pack.Builder
	data, entries := b.Build(pack.KindPack, nil)
	if len(entries) != 0 {
		t.Fatalf("entries = %v", entries)
	}
	o, err := pack.Parse(data, "empty")
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Entries) != 0 || len(o.Manifest) != 0 {
		t.Errorf("parsed %+v", o)
	}
}

func TestAddStored(t *testing.T) {
	data, _, blobs := buildFixed(pack.KindPack, nil)
	o, err := pack.Parse(data, "src")
	if err != nil {
		t.Fatal(err)
	}
	var b pack.Builder
	for _, e := range o.Entries {
		if !b.AddStored(e.ID, e.RawLen, o.Stored(e)) {
			t.Fatalf("AddStored(%s) reported a duplicate", e.ID.Short())
		}
	}
	if b.AddStored(o.Entries[0].ID, o.Entries[0].RawLen, o.Stored(o.Entries[0])) {
		t.Error("AddStored accepted a duplicate")
	}
	var raw int64
	for _, bl := range blobs {
		raw += int64(len(bl))
	}
	if got, want := b.RawSize(), raw; got != want {
		t.Errorf("RawSize = %d, want %d", got, want)
	}
	copied, _ := b.Build(pack.KindPack, nil)
	if !bytes.Equal(copied, data) {
		t.Error("copying every stored blob did not reproduce the object")
	}
}

// TestFlippedByte flips every bit pattern 0xff into every byte of a small
// object in turn: each must be rejected as corrupt by Parse, or (for a
// byte inside a blob, were the trailer not there) by the blob's hash.
func TestFlippedByte(t *testing.T) {
	var b pack.Builder
	for _, raw := range [][]byte{[]byte("hello"), []byte(strings.Repeat("compressible ", 10)), seeded(80, 3)} {
		b.Add(cas.Sum(raw), raw)
	}
	data, _ := b.Build(pack.KindStep, []byte("manifest"))
	for i := range data {
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			bad := bytes.Clone(data)
			bad[i] ^= mask
			o, err := pack.Parse(bad, "obj")
			if !errors.Is(err, cas.ErrCorrupt) {
				t.Fatalf("flip %#x at byte %d/%d: Parse = %v, want ErrCorrupt", mask, i, len(data), err)
			}
			if o != nil {
				t.Fatalf("flip at byte %d: Parse returned an object with its error", i)
			}
		}
	}
}

// TestFlippedBlobByte bypasses the trailer (as a ranged reader that only
// parsed the header would) and checks that a flipped byte inside a
// stored blob is still caught by DecodeBlob, unless the flip is in a
// zstd frame field that does not change the content (such as the window
// size), in which case the verified content is returned.
func TestFlippedBlobByte(t *testing.T) {
	for _, raw := range [][]byte{[]byte("hello"), []byte(strings.Repeat("compressible ", 10)), seeded(80, 3)} {
		id := cas.Sum(raw)
		stored := pack.EncodeBlob(nil, raw)
		for i := range stored {
			bad := bytes.Clone(stored)
			bad[i] ^= 0x01
			got, err := pack.DecodeBlob(bad, id, len(raw), "blob")
			if err == nil && bytes.Equal(got, raw) {
				continue
			}
			if !errors.Is(err, cas.ErrCorrupt) {
				t.Fatalf("flip at byte %d of %d-byte stored blob: %v, want ErrCorrupt", i, len(stored), err)
			}
		}
	}
}

func TestTruncated(t *testing.T) {
	data, _, _ := buildFixed(pack.KindStep, []byte("manifest"))
	for n := 0; n < len(data); n++ {
		if _, err := pack.Parse(data[:n], "obj"); !errors.Is(err, cas.ErrCorrupt) {
			t.Fatalf("Parse of %d/%d bytes: %v, want ErrCorrupt", n, len(data), err)
		}
	}
	// Extra bytes are corrupt too.
	if _, err := pack.Parse(append(bytes.Clone(data), 0), "obj"); !errors.Is(err, cas.ErrCorrupt) {
		t.Fatalf("Parse with a trailing byte: %v, want ErrCorrupt", err)
	}
}

// withTrailer returns body followed by its correct trailer, so that
// hand-made or fuzzed headers get past the checksum.
func withTrailer(body []byte) []byte {
	sum := cas.Sum(body)
	return append(bytes.Clone(body), sum[:]...)
}

func TestHostileHeaders(t *testing.T) {
	hdr := func(kind byte, rest ...byte) []byte {
		return append([]byte("CAIRNPK\x01"+string(kind)), rest...)
	}
	var id [32]byte
	entry := func(stored, raw uint64) []byte {
		b := append([]byte(nil), id[:]...)
		b = binary.AppendUvarint(b, stored)
		return binary.AppendUvarint(b, raw)
	}
	huge := binary.AppendUvarint(nil, 1<<62)
	for name, body := range map[string][]byte{
		"bad magic":          append([]byte("CAIRNPX\x01S"), 0, 0),
		"version 2":          append([]byte("CAIRNPK\x02S"), 0, 0),
		"unknown kind":       hdr('Z', 0, 0),
		"huge manifest":      hdr('S', huge...),
		"manifest past end":  hdr('S', 10, 'a'),
		"huge count":         hdr('P', append([]byte{0}, huge...)...),
		"count past end":     hdr('P', 0, 3),
		"zero stored length": hdr('P', append([]byte{0, 1}, entry(0, 0)...)...),
		"huge stored length": hdr('P', append([]byte{0, 1}, entry(1<<40, 0)...)...),
		"huge raw length":    hdr('P', append([]byte{0, 1}, entry(1, 1<<40)...)...),
		"blob past end":      hdr('P', append(append([]byte{0, 1}, entry(5, 4)...), 0, 'a')...),
		"stray bytes":        hdr('P', append(append([]byte{0, 1}, entry(1, 0)...), 0, 'x')...),
		"overlong varint":    hdr('P', 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01),
	} {
		if _, err := pack.Parse(withTrailer(body), name); !errors.Is(err, cas.ErrCorrupt) {
			t.Errorf("%s: Parse = %v, want ErrCorrupt", name, err)
		}
	}
}

// TestStrayBytesWithoutBlobs: an object with no blobs must end right
// after its index, as one with blobs must end after its last blob.
// Parse checks for stray bytes only when there is at least one blob.
func TestStrayBytesWithoutBlobs(t *testing.T) {
	var b pack.Builder
	data, _ := b.Build(pack.KindStep, []byte("manifest"))
	body := append(bytes.Clone(data[:len(data)-cas.IDSize]), "stray"...)
	if _, err := pack.Parse(withTrailer(body), "obj"); !errors.Is(err, cas.ErrCorrupt) {
		t.Fatalf("Parse of a blob-less object with 5 stray bytes = %v, want ErrCorrupt", err)
	}
}

func TestDecodeBlobErrors(t *testing.T) {
	raw := []byte(strings.Repeat("abc", 100))
	id := cas.Sum(raw)
	stored := pack.EncodeBlob(nil, raw)
	if stored[0] != pack.CodecZstd {
		t.Fatalf("codec %d, want zstd", stored[0])
	}
	for name, tc := range map[string]struct {
		stored []byte
		id     cas.ID
		n      int
	}{
		"empty":          {nil, id, len(raw)},
		"unknown codec":  {append([]byte{7}, raw...), id, len(raw)},
		"wrong length":   {stored, id, len(raw) - 1},
		"negative size":  {stored, id, -1},
		"too big":        {stored, id, pack.MaxBlobSize + 1},
		"wrong id":       {stored, cas.Sum([]byte("other")), len(raw)},
		"garbage zstd":   {[]byte{pack.CodecZstd, 1, 2, 3, 4}, id, len(raw)},
		"truncated zstd": {stored[:len(stored)-3], id, len(raw)},
	} {
		if _, err := pack.DecodeBlob(tc.stored, tc.id, tc.n, name); !errors.Is(err, cas.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

// TestDecodeBlobNotAliased: a raw blob decoded from an object must not
// alias the object's bytes (the object may be cached and shared).
func TestDecodeBlobNotAliased(t *testing.T) {
	raw := []byte("short raw blob")
	stored := pack.EncodeBlob(nil, raw)
	got, err := pack.DecodeBlob(stored, cas.Sum(raw), len(raw), "blob")
	if err != nil {
		t.Fatal(err)
	}
	got[0] = 'X'
	if stored[1] != 's' {
		t.Fatal("DecodeBlob returned a slice of the stored bytes")
	}
}

// TestDecodeBlobBomb: a small zstd frame that expands past MaxBlobSize is
// an error, whatever size the index claims, not an allocation of its
// expanded size.
func TestDecodeBlobBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("decompresses 64 MiB")
	}
	for _, bomb := range zstdBombs(t) {
		if len(bomb) > 64<<10 {
			t.Fatalf("bomb is %d bytes; want a small frame", len(bomb))
		}
		for _, n := range []int{0, 100, pack.MaxBlobSize} {
			if _, err := pack.DecodeBlob(bomb, cas.ID{}, n, "bomb"); !errors.Is(err, cas.ErrCorrupt) {
				t.Errorf("bomb of %d bytes, rawLen %d: %v, want ErrCorrupt", len(bomb), n, err)
			}
		}
	}
}

// TestDecodeBlobBombBounded: decoding a blob must cost memory in
// proportion to the size its index claims, not to MaxBlobSize. A 13 KB
// zstd frame streamed without a content size, in an entry that claims
// 100 bytes, must fail without decoding 64 MiB.
func TestDecodeBlobBombBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("decompresses 64 MiB")
	}
	for i, bomb := range zstdBombs(t) {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := pack.DecodeBlob(bomb, cas.ID{}, 100, "bomb")
		runtime.ReadMemStats(&after)
		if !errors.Is(err, cas.ErrCorrupt) {
			t.Errorf("bomb %d: %v, want ErrCorrupt", i, err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
			t.Errorf("bomb %d (%d bytes) claiming 100 raw bytes made DecodeBlob allocate %d MiB", i, len(bomb), got>>20)
		}
	}
}

func BenchmarkEncodeBlob(b *testing.B) {
	for _, tc := range benchInputs() {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.raw)))
			var dst []byte
			for b.Loop() {
				dst = pack.EncodeBlob(dst[:0], tc.raw)
			}
		})
	}
}

// BenchmarkEncodeBlobParallel encodes on every core at once, as the
// workers of a large commit do.
func BenchmarkEncodeBlobParallel(b *testing.B) {
	for _, tc := range benchInputs() {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.raw)))
			b.RunParallel(func(pb *testing.PB) {
				var dst []byte
				for pb.Next() {
					dst = pack.EncodeBlob(dst[:0], tc.raw)
				}
			})
		})
	}
}

func BenchmarkDecodeBlob(b *testing.B) {
	for _, tc := range benchInputs() {
		b.Run(tc.name, func(b *testing.B) {
			id := cas.Sum(tc.raw)
			stored := pack.EncodeBlob(nil, tc.raw)
			b.SetBytes(int64(len(tc.raw)))
			for b.Loop() {
				if _, err := pack.DecodeBlob(stored, id, len(tc.raw), "bench"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type benchInput struct {
	name string
	raw  []byte
}

func benchInputs() []benchInput {
	var text strings.Builder
	for i := 0; text.Len() < 64<<10; i++ {
		fmt.Fprintf(&text, `{"role":"assistant","content":"step %d tok%d tok%d"},`, i, i*7, i*13)
	}
	return []benchInput{
		{"json-64KiB", []byte(text.String())},
		{"random-64KiB", seeded(64<<10, 9)},
		{"json-4KiB", []byte(text.String()[:4<<10])},
	}
}

// BuildInPlace writes exactly the bytes and index Build does, around
// blobs already laid out in the caller's buffer.
func TestBuildInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{0, 1, 3, 200} {
		var b pack.Builder
		room := pack.HeaderRoom(n)
		buf := make([]byte, room, room+n*700+cas.IDSize)
		for i := range n {
			raw := make([]byte, 1+rng.IntN(600))
			for j := range raw {
				raw[j] = byte(rng.IntN(4 + i%200))
			}
			stored := pack.EncodeBlob(nil, raw)
			at := len(buf)
			buf = append(buf, stored...)
			b.AddStored(cas.Sum(raw), int64(len(raw)), buf[at:len(buf):len(buf)])
		}
		want, wantEntries := b.Build(pack.KindPack, nil)
		got, gotEntries := b.BuildInPlace(buf, room)
		if !bytes.Equal(got, want) {
			t.Fatalf("%d blobs: BuildInPlace wrote other bytes than Build", n)
		}
		if fmt.Sprint(gotEntries) != fmt.Sprint(wantEntries) {
			t.Fatalf("%d blobs: entries %v, want %v", n, gotEntries, wantEntries)
		}
		if _, err := pack.Parse(got, "in place"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEncodeBlobCodesTextWithoutRepeats: base64 of random bytes (an
// image or a file inside a JSON state) holds no repeat for zstd's fastest
// level to find; its encoder stores such a block raw unless told to try
// entropy coding, which takes base64 to about three quarters.
func TestEncodeBlobCodesTextWithoutRepeats(t *testing.T) {
	for _, n := range []int{1 << 10, 64 << 10} {
		raw := []byte(base64.StdEncoding.EncodeToString(seeded(n*3/4, 11)))
		stored := pack.EncodeBlob(nil, raw)
		if len(stored) > len(raw)*85/100 {
			t.Errorf("%d bytes of base64 stored in %d bytes; want at most 85%%", len(raw), len(stored))
		}
		back, err := pack.DecodeBlob(stored, cas.Sum(raw), len(raw), "blob")
		if err != nil || !bytes.Equal(back, raw) {
			t.Fatalf("round trip of %d bytes of base64: %v", len(raw), err)
		}
	}
}
