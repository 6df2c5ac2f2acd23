package pack_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/klauspost/compress/zstd"
)

// maxFuzzBlobs and maxFuzzRaw bound what FuzzParse decodes: an entry may
// legitimately claim up to MaxBlobSize, and decoding 64 MiB under
// coverage instrumentation takes seconds, which stalls the fuzzer.
// FuzzDecodeBlob and TestDecodeBlobBomb cover the large sizes.
const (
	maxFuzzBlobs = 32
	maxFuzzRaw   = 1 << 20
)

// checkObject decodes every blob of a parsed object and checks the
// contract: any error is ErrCorrupt, any success is the verified content.
func checkObject(t *testing.T, o *pack.Object, data []byte) {
	t.Helper()
	end := int64(len(data) - cas.IDSize)
	for i, e := range o.Entries {
		if e.Offset < 0 || e.StoredLen <= 0 || e.Offset+e.StoredLen > end {
			t.Fatalf("entry %d = %+v is outside the %d-byte body", i, e, end)
		}
		if i >= maxFuzzBlobs || e.RawLen > maxFuzzRaw {
			continue
		}
		raw, err := o.Blob(e)
		if err != nil {
			if !errors.Is(err, cas.ErrCorrupt) {
				t.Fatalf("Blob(%d) = %v, want ErrCorrupt", i, err)
			}
			continue
		}
		if int64(len(raw)) != e.RawLen || cas.Sum(raw) != e.ID {
			t.Fatalf("Blob(%d) returned %d bytes that do not match %+v", i, len(raw), e)
		}
	}
}

// FuzzParse feeds arbitrary bytes to Parse, both as they are (the
// trailer almost never matches) and with a correct trailer appended, so
// the fuzzer reaches the header and blob decoders.
func FuzzParse(f *testing.F) {
	data, _, _ := buildFixed(pack.KindStep, []byte("manifest"))
	f.Add(data)
	f.Add(data[:len(data)-cas.IDSize])
	var b pack.Builder
	b.Add(cas.Sum([]byte("x")), []byte("x"))
	one, _ := b.Build(pack.KindPack, nil)
	f.Add(one[:len(one)-cas.IDSize])
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, obj := range [][]byte{data, withTrailer(data)} {
			o, err := pack.Parse(obj, "fuzz")
			if err != nil {
				if !errors.Is(err, cas.ErrCorrupt) {
					t.Fatalf("Parse = %v, want ErrCorrupt", err)
				}
				if o != nil {
					t.Fatal("Parse returned an object with an error")
				}
				continue
			}
			if o.Size() != int64(len(obj)) {
				t.Fatalf("Size = %d, want %d", o.Size(), len(obj))
			}
			checkObject(t, o, obj)
		}
	})
}

// FuzzParseHeader checks that ParseHeader never panics, reports only
// ErrShort or ErrCorrupt, and that a header parsed from a prefix is the
// same header whatever bytes follow it.
func FuzzParseHeader(f *testing.F) {
	data, entries, _ := buildFixed(pack.KindStep, []byte("manifest"))
	f.Add(data)
	f.Add(data[:entries[0].Offset])
	f.Add(data[:entries[0].Offset-1])
	f.Add([]byte("CAIRNPK\x01P\x00\x00"))
	f.Fuzz(func(t *testing.T, prefix []byte) {
		o, err := pack.ParseHeader(prefix, "fuzz")
		if err != nil {
			if !errors.Is(err, pack.ErrShort) && !errors.Is(err, cas.ErrCorrupt) {
				t.Fatalf("ParseHeader = %v, want ErrShort or ErrCorrupt", err)
			}
			if errors.Is(err, pack.ErrShort) {
				// More bytes can only complete or corrupt the header.
				return
			}
			// A corrupt header stays corrupt however much more is read.
			if _, err2 := pack.ParseHeader(append(bytes.Clone(prefix), make([]byte, 64)...), "fuzz"); !errors.Is(err2, cas.ErrCorrupt) {
				t.Fatalf("corrupt header (%v) parsed as %v with more bytes", err, err2)
			}
			return
		}
		if o.Size() != 0 {
			t.Fatalf("header-only object has size %d", o.Size())
		}
		if len(o.Manifest) > pack.MaxManifestSize || len(o.Entries) > pack.MaxBlobs {
			t.Fatalf("limits exceeded: %d manifest bytes, %d entries", len(o.Manifest), len(o.Entries))
		}
		var prev int64
		for i, e := range o.Entries {
			if e.StoredLen <= 0 || e.StoredLen > pack.MaxBlobSize+1024 || e.RawLen < 0 || e.RawLen > pack.MaxBlobSize {
				t.Fatalf("entry %d has out-of-range lengths %+v", i, e)
			}
			if i == 0 && e.Offset > int64(len(prefix)) || i > 0 && e.Offset != prev {
				t.Fatalf("entry %d offset %d, want %d", i, e.Offset, prev)
			}
			prev = e.Offset + e.StoredLen
		}
		more, err := pack.ParseHeader(append(bytes.Clone(prefix), 0xff, 0xff), "fuzz")
		if err != nil || fmt.Sprint(more.Entries) != fmt.Sprint(o.Entries) || !bytes.Equal(more.Manifest, o.Manifest) {
			t.Fatalf("header changed when more bytes followed: %v", err)
		}
	})
}

// FuzzDecodeBlob checks that DecodeBlob never panics or over-allocates,
// fails only with ErrCorrupt, returns only verified content, and that
// EncodeBlob round-trips any input.
func FuzzDecodeBlob(f *testing.F) {
	for _, raw := range fixedBlobs() {
		id := cas.Sum(raw)
		f.Add(pack.EncodeBlob(nil, raw), len(raw), id[:])
	}
	f.Add([]byte{pack.CodecZstd, 0x28, 0xb5, 0x2f, 0xfd}, 10, []byte{})
	f.Fuzz(func(t *testing.T, stored []byte, rawLen int, idBytes []byte) {
		var id cas.ID
		copy(id[:], idBytes)
		raw, err := pack.DecodeBlob(stored, id, rawLen, "fuzz")
		if err != nil {
			if !errors.Is(err, cas.ErrCorrupt) {
				t.Fatalf("DecodeBlob = %v, want ErrCorrupt", err)
			}
		} else if len(raw) != rawLen || cas.Sum(raw) != id {
			t.Fatalf("DecodeBlob returned %d unverified bytes", len(raw))
		}

		// Any bytes round-trip through EncodeBlob.
		enc := pack.EncodeBlob([]byte("prefix"), stored)
		if !bytes.HasPrefix(enc, []byte("prefix")) {
			t.Fatal("EncodeBlob clobbered dst")
		}
		enc = enc[len("prefix"):]
		if len(enc) > len(stored)+1 {
			t.Fatalf("EncodeBlob grew %d bytes to %d", len(stored), len(enc))
		}
		back, err := pack.DecodeBlob(enc, cas.Sum(stored), len(stored), "round trip")
		if err != nil || !bytes.Equal(back, stored) {
			t.Fatalf("round trip of %d bytes: %v", len(stored), err)
		}
	})
}

// zstdBombs returns codec-prefixed zstd frames of a few KiB that expand
// past MaxBlobSize: one declaring its content size in the frame header
// and one streamed without it.
func zstdBombs(t testing.TB) [][]byte {
	t.Helper()
	zeros := make([]byte, pack.MaxBlobSize+1)
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	declared := enc.EncodeAll(zeros, []byte{pack.CodecZstd})

	var buf bytes.Buffer
	buf.WriteByte(pack.CodecZstd)
	w, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ { // 4 × (MaxBlobSize/4 + 1) > MaxBlobSize, in pieces
		if _, err := w.Write(zeros[:pack.MaxBlobSize/4+1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return [][]byte{declared, buf.Bytes()}
}

// TestWriteFuzzCorpus rewrites the committed seed corpora (run with
// -update). Seeds that need big inputs to make (zstd bombs) live there
// rather than in f.Add, so that plain go test replays them cheaply.
func TestWriteFuzzCorpus(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite testdata/fuzz")
	}
	data, entries, _ := buildFixed(pack.KindStep, []byte("manifest"))
	body := data[:len(data)-cas.IDSize]
	write := func(fuzz, name string, args ...any) {
		var s strings.Builder
		s.WriteString("go test fuzz v1\n")
		for _, a := range args {
			switch a := a.(type) {
			case []byte:
				fmt.Fprintf(&s, "[]byte(%q)\n", a)
			case int:
				fmt.Fprintf(&s, "int(%d)\n", a)
			default:
				t.Fatalf("corpus type %T", a)
			}
		}
		dir := filepath.Join("testdata", "fuzz", fuzz)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("FuzzParse", "step-object", data)
	write("FuzzParse", "step-object-body", body)
	// The index claims a raw length the blob does not have.
	var lying pack.Builder
	lraw := []byte(strings.Repeat("lie ", 40))
	lying.AddStored(cas.Sum(lraw), int64(len(lraw))+1, pack.EncodeBlob(nil, lraw))
	lobj, _ := lying.Build(pack.KindPack, nil)
	write("FuzzParse", "lying-index", lobj[:len(lobj)-cas.IDSize])
	write("FuzzParseHeader", "step-object", data)
	write("FuzzParseHeader", "header-only", data[:entries[0].Offset])
	write("FuzzParseHeader", "huge-count", []byte("CAIRNPK\x01P\x00\xff\xff\xff\xff\x0f"))
	for i, bomb := range zstdBombs(t) {
		write("FuzzDecodeBlob", fmt.Sprintf("zstd-bomb-%d", i), bomb, 100, make([]byte, 32))
		// Bombs claiming MaxBlobSize (TestDecodeBlobBomb) decode 64 MiB
		// per run: too slow for a fuzzing seed.
	}
	raw := []byte(strings.Repeat("compressible ", 20))
	id := cas.Sum(raw)
	write("FuzzDecodeBlob", "zstd-ok", pack.EncodeBlob(nil, raw), len(raw), id[:])
	hi := cas.Sum([]byte("hi"))
	write("FuzzDecodeBlob", "raw-ok", pack.EncodeBlob(nil, []byte("hi")), 2, hi[:])
}

// FuzzParseManifest: any prefix is a manifest, ErrShort or ErrCorrupt;
// a manifest agrees with ParseHeader's reading of the same bytes, and
// the first ManifestPrefix bytes of its length read it again or are short.
func FuzzParseManifest(f *testing.F) {
	data, entries, _ := buildFixed(pack.KindStep, []byte("manifest"))
	f.Add(data)
	f.Add(data[:entries[0].Offset-1])
	f.Add([]byte("CAIRNPK\x01S\x80\x01"))
	f.Fuzz(func(t *testing.T, prefix []byte) {
		m, err := pack.ParseManifest(prefix, "fuzz")
		if err != nil {
			if !errors.Is(err, pack.ErrShort) && !errors.Is(err, cas.ErrCorrupt) {
				t.Fatalf("ParseManifest = %v, want ErrShort or ErrCorrupt", err)
			}
			return
		}
		// ManifestPrefix counts the length as Build writes it (the
		// shortest varint): its bytes of a longer encoding are short,
		// never another manifest.
		n := min(pack.ManifestPrefix(len(m)), int64(len(prefix)))
		if again, err := pack.ParseManifest(prefix[:n], "fuzz"); err != nil && !errors.Is(err, pack.ErrShort) || err == nil && !bytes.Equal(again, m) {
			t.Fatalf("manifest from its ManifestPrefix bytes: %v", err)
		}
		if o, err := pack.ParseHeader(prefix, "fuzz"); err == nil && !bytes.Equal(o.Manifest, m) {
			t.Fatal("ParseHeader reads another manifest")
		}
	})
}
