package chunker_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/cairnlog/cairn/cas/chunker"
)

var update = flag.Bool("update", false, "rewrite testdata/boundaries.golden")

// small is a second parameter set, pinned in the golden file next to Default.
var small = chunker.Params{Min: 256, Avg: 1024, Max: 4096}

// seeded returns n pseudo-random bytes from a PCG seeded with seed. The
// output is part of the golden file: do not change this generator.
func seeded(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x636169726e))
	b := make([]byte, (n+7)&^7)
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	return b[:n]
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		p  chunker.Params
		ok bool
	}{
		{chunker.Params{}, true},
		{chunker.Default, true},
		{small, true},
		{chunker.Params{Min: 64, Avg: 64, Max: 64}, true},
		{chunker.Params{Avg: 1 << 20}, true}, // 256 KiB, 1 MiB, 4 MiB
		{chunker.Params{Min: 1 << 10}, true}, // 1 KiB, 16 KiB, 64 KiB
		{chunker.Params{Min: 64, Avg: 4 << 20, Max: 16 << 20}, true},
		{chunker.Params{Min: 63, Avg: 1024, Max: 4096}, false},
		{chunker.Params{Min: -1, Avg: 1024, Max: 4096}, false},
		{chunker.Params{Min: 256, Avg: 1000, Max: 4096}, false},
		{chunker.Params{Min: 256, Avg: -1024, Max: 4096}, false},
		{chunker.Params{Min: 2048, Avg: 1024, Max: 4096}, false},
		{chunker.Params{Min: 256, Avg: 1024, Max: 512}, false},
		{chunker.Params{Min: 256, Avg: 1024, Max: -1}, false},
		{chunker.Params{Min: 64, Avg: 16 << 20, Max: 16<<20 + 1}, false},
		{chunker.Params{Avg: 8 << 20}, false}, // Max derives to 32 MiB
		{chunker.Params{Avg: 128}, false},     // Min derives to 32
	} {
		err := tc.p.Validate()
		if got, want := err == nil, tc.ok; got != want {
			t.Errorf("%+v.Validate() = %v, want ok=%v", tc.p, err, want)
		}
	}
}

func TestZeroParamsIsDefault(t *testing.T) {
	data := seeded(1<<20, 7)
	if got, want := (chunker.Params{}).Boundaries(data), chunker.Default.Boundaries(data); !slices.Equal(got, want) {
		t.Fatalf("Params{} boundaries differ from Default")
	}
}

func TestInvalidPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Boundaries with invalid params did not panic")
		}
	}()
	chunker.Params{Min: 10, Avg: 1024, Max: 4096}.Boundaries([]byte("x"))
}

func TestEmpty(t *testing.T) {
	if got := chunker.Default.Boundaries(nil); got != nil {
		t.Errorf("Boundaries(nil) = %v, want nil", got)
	}
	if got := chunker.Default.Split([]byte{}); got != nil {
		t.Errorf("Split(empty) = %v, want nil", got)
	}
}

// checkSizes verifies that bounds end at len(data) and that every chunk but
// the last is within [Min, Max] (the last within [1, Max]).
func checkSizes(t *testing.T, p chunker.Params, bounds []int, n int) {
	t.Helper()
	if n == 0 {
		if len(bounds) != 0 {
			t.Fatalf("boundaries of empty data = %v, want none", bounds)
		}
		return
	}
	if got, want := bounds[len(bounds)-1], n; got != want {
		t.Fatalf("last boundary = %d, want %d", got, want)
	}
	prev := 0
	for i, b := range bounds {
		size := b - prev
		last := i == len(bounds)-1
		if size <= 0 || size > p.Max || (!last && size < p.Min) {
			t.Fatalf("chunk %d of %d: size %d outside [%d, %d] (last=%v)", i, len(bounds), size, p.Min, p.Max, last)
		}
		prev = b
	}
}

func TestSizes(t *testing.T) {
	data := seeded(8<<20, 1)
	for _, p := range []chunker.Params{chunker.Default, small, {Min: 64, Avg: 256, Max: 1024}, {Min: 16 << 10, Avg: 64 << 10, Max: 256 << 10}} {
		t.Run(fmt.Sprintf("%d-%d-%d", p.Min, p.Avg, p.Max), func(t *testing.T) {
			bounds := p.Boundaries(data)
			checkSizes(t, p, bounds, len(data))
			mean := float64(len(data)) / float64(len(bounds))
			t.Logf("%d chunks, mean %.0f bytes (%.3f×Avg)", len(bounds), mean, mean/float64(p.Avg))
			if lo, hi := 0.75*float64(p.Avg), 1.25*float64(p.Avg); mean < lo || mean > hi {
				t.Errorf("mean chunk size = %.0f, want within [%.0f, %.0f]", mean, lo, hi)
			}
		})
	}
}

func TestSplitMatchesBoundaries(t *testing.T) {
	data := seeded(3<<20, 2)
	bounds := small.Boundaries(data)
	chunks := small.Split(data)
	if got, want := len(chunks), len(bounds); got != want {
		t.Fatalf("len(Split) = %d, want %d", got, want)
	}
	off := 0
	for i, c := range chunks {
		if got, want := off+len(c), bounds[i]; got != want {
			t.Fatalf("chunk %d ends at %d, want %d", i, got, want)
		}
		if len(c) > 0 && &c[0] != &data[off] {
			t.Fatalf("chunk %d is a copy, want a subslice of data", i)
		}
		off += len(c)
	}
}

// TestGolden pins the boundaries of seeded data: they are part of the
// on-disk format. Regenerate with `go test ./cas/chunker -update` only for a
// deliberate, versioned format change.
func TestGolden(t *testing.T) {
	const size, seed = 4 << 20, 1
	data := seeded(size, seed)
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# cairn chunk boundaries (on-disk format); regenerate with: go test ./cas/chunker -update\n")
	for _, p := range []chunker.Params{chunker.Default, small} {
		bounds := p.Boundaries(data)
		fmt.Fprintf(&buf, "params min=%d avg=%d max=%d data=pcg seed=%d size=%d chunks=%d\n", p.Min, p.Avg, p.Max, seed, size, len(bounds))
		for i, b := range bounds {
			buf.WriteString(strconv.Itoa(b))
			if i%16 == 15 || i == len(bounds)-1 {
				buf.WriteByte('\n')
			} else {
				buf.WriteByte(' ')
			}
		}
	}
	path := filepath.Join("testdata", "boundaries.golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (create it with -update): %v", err)
	}
	if got := buf.String(); got != string(want) {
		g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(g), len(w)) {
			if g[i] != w[i] {
				t.Fatalf("chunk boundaries changed (on-disk format!) at %s line %d:\n got: %s\nwant: %s", path, i+1, g[i], w[i])
			}
		}
		t.Fatalf("chunk boundaries changed (on-disk format!): %s has %d lines, got %d", path, len(w), len(g))
	}
}

func TestInsertionStability(t *testing.T) {
	for _, p := range []chunker.Params{chunker.Default, small} {
		t.Run(fmt.Sprintf("avg%d", p.Avg), func(t *testing.T) {
			orig := seeded(4<<20, 3)
			mid := len(orig) / 2
			edited := slices.Concat(orig[:mid], seeded(100, 4), orig[mid:])

			before := make(map[string]bool)
			for _, c := range p.Split(orig) {
				before[string(c)] = true
			}
			after := p.Split(edited)
			same := 0
			for _, c := range after {
				if before[string(c)] {
					same++
				}
			}
			t.Logf("%d of %d chunks unchanged", same, len(after))
			if got, want := float64(same)/float64(len(after)), 0.90; got < want {
				t.Errorf("unchanged chunks = %d/%d (%.3f), want at least %.2f", same, len(after), got, want)
			}
		})
	}
}

// readAll drains a Reader and returns the boundaries of the chunks it gave.
func readAll(t testing.TB, cr *chunker.Reader, data []byte) []int {
	t.Helper()
	var bounds []int
	off := 0
	for {
		c, err := cr.Next()
		if err == io.EOF {
			if c != nil {
				t.Fatalf("Next returned %d bytes with io.EOF", len(c))
			}
			return bounds
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if len(c) == 0 {
			t.Fatalf("Next returned an empty chunk at %d", off)
		}
		if off+len(c) > len(data) || !bytes.Equal(c, data[off:off+len(c)]) {
			t.Fatalf("chunk at %d does not match the data", off)
		}
		off += len(c)
		bounds = append(bounds, off)
	}
}

func TestReaderMatchesSplit(t *testing.T) {
	big := seeded(10<<20, 5)
	for _, p := range []chunker.Params{chunker.Default, small} {
		sizes := []int{0, 1, p.Min - 1, p.Min, p.Min + 1, p.Avg, p.Max - 1, p.Max, p.Max + 1, 2*p.Max + 7, 3<<20 + 1, 10 << 20}
		for _, n := range sizes {
			data := big[:n]
			want := p.Boundaries(data)
			readers := map[string]io.Reader{
				"plain": bytes.NewReader(data),
				"half":  iotest.HalfReader(bytes.NewReader(data)),
				"eof":   iotest.DataErrReader(bytes.NewReader(data)),
			}
			if n <= 3<<20+1 {
				readers["onebyte"] = iotest.OneByteReader(bytes.NewReader(data))
			}
			for name, r := range readers {
				t.Run(fmt.Sprintf("avg%d/n%d/%s", p.Avg, n, name), func(t *testing.T) {
					got := readAll(t, p.NewReader(r), data)
					if !slices.Equal(got, want) {
						t.Fatalf("Reader boundaries differ from Boundaries: got %d chunks, want %d", len(got), len(want))
					}
				})
			}
		}
	}
}

func TestReaderOneByte10MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: 10 Mi one-byte reads")
	}
	data := seeded(10<<20, 5)
	got := readAll(t, chunker.Default.NewReader(iotest.OneByteReader(bytes.NewReader(data))), data)
	if want := chunker.Default.Boundaries(data); !slices.Equal(got, want) {
		t.Fatalf("one-byte Reader boundaries differ: got %d chunks, want %d", len(got), len(want))
	}
}

func TestReaderError(t *testing.T) {
	data := seeded(1<<20, 6)
	boom := errors.New("boom")
	cut := 500 << 10
	r := io.MultiReader(bytes.NewReader(data[:cut]), iotest.ErrReader(boom))
	cr := small.NewReader(r)
	want := small.Boundaries(data)
	off := 0
	for {
		c, err := cr.Next()
		if err != nil {
			if !errors.Is(err, boom) {
				t.Fatalf("Next error = %v, want %v", err, boom)
			}
			break
		}
		off += len(c)
		if !slices.Contains(want, off) {
			t.Fatalf("chunk ending at %d before the error is not a boundary of the full data", off)
		}
	}
	if off > cut || off < cut-small.Max {
		t.Fatalf("chunks before the error cover %d bytes, want within (%d, %d]", off, cut-small.Max, cut)
	}
	if _, err := cr.Next(); !errors.Is(err, boom) {
		t.Fatalf("Next after error = %v, want sticky %v", err, boom)
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestReaderNoProgress(t *testing.T) {
	if _, err := small.NewReader(zeroReader{}).Next(); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("Next on a reader that never progresses = %v, want io.ErrNoProgress", err)
	}
}

func FuzzBoundaries(f *testing.F) {
	// Seeds stay small: the fuzzer's minimizer is quadratic in input length.
	f.Add([]byte{}, uint8(0))
	f.Add([]byte("a"), uint8(1))
	f.Add(bytes.Repeat([]byte{0}, 600), uint8(0))
	f.Add(bytes.Repeat([]byte("abcdefgh"), 64), uint8(0))
	f.Add(seeded(512, 9), uint8(0))
	f.Add(seeded(1024, 10), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, shift uint8) {
		// Small params so fuzz-sized inputs hold several chunks:
		// Avg 64 to 512 bytes, Min = max(64, Avg/4), Max = 4×Avg.
		avg := 64 << (shift % 4)
		p := chunker.Params{Min: max(64, avg/4), Avg: avg, Max: 4 * avg}
		bounds := p.Boundaries(data)
		checkSizes(t, p, bounds, len(data))
		if !slices.IsSorted(bounds) {
			t.Fatalf("boundaries not increasing: %v", bounds)
		}
		var joined []byte
		for _, c := range p.Split(data) {
			joined = append(joined, c...)
		}
		if !bytes.Equal(joined, data) {
			t.Fatal("chunks do not concatenate to the data")
		}
		for _, r := range []io.Reader{bytes.NewReader(data), iotest.OneByteReader(bytes.NewReader(data))} {
			if got := readAll(t, p.NewReader(r), data); !slices.Equal(got, bounds) {
				t.Fatalf("Reader boundaries %v, want %v", got, bounds)
			}
		}
	})
}

func BenchmarkSplit(b *testing.B) {
	data := seeded(64<<20, 11)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		chunker.Default.Split(data)
	}
}

func BenchmarkReader(b *testing.B) {
	data := seeded(64<<20, 11)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		cr := chunker.Default.NewReader(bytes.NewReader(data))
		for {
			if _, err := cr.Next(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
	}
}
