package tree_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/chunker"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/manifest/tree"
)

// putRecord is one blob as a sink received it.
type putRecord struct {
	id     cas.ID
	stored []byte // the stored form (EncodeBlob of the raw bytes)
}

// orderSink records every put in order; with chunks set it is a
// tree.ChunkSink that encodes chunks on the build's workers.
type orderSink struct {
	mu      sync.Mutex
	puts    []putRecord
	encodes int
	failAt  int // fail the failAt-th put (from 1); 0: never
}

func (s *orderSink) Put(id cas.ID, raw []byte) error {
	if cas.Sum(raw) != id {
		return errors.New("put: content does not hash to its id")
	}
	if s.failAt > 0 && len(s.puts)+1 == s.failAt {
		return errSinkFull
	}
	s.puts = append(s.puts, putRecord{id: id, stored: pack.EncodeBlob(nil, raw)})
	return nil
}

var errSinkFull = errors.New("sink full")

// chunkSink is an orderSink that takes chunks encoded.
type chunkSink struct{ orderSink }

var _ tree.ChunkSink = (*chunkSink)(nil)

func (s *chunkSink) EncodeChunk(id cas.ID, raw, dst []byte) []byte {
	if cas.Sum(raw) != id {
		panic("EncodeChunk: content does not hash to its id")
	}
	s.mu.Lock()
	s.encodes++
	s.mu.Unlock()
	return pack.EncodeBlob(dst, raw)
}

func (s *chunkSink) PutChunk(id cas.ID, raw, stored []byte) error {
	if cas.Sum(raw) != id {
		return errors.New("put chunk: content does not hash to its id")
	}
	if !bytes.Equal(stored, pack.EncodeBlob(nil, raw)) {
		return errors.New("put chunk: stored form is not EncodeBlob of the chunk")
	}
	if s.failAt > 0 && len(s.puts)+1 == s.failAt {
		return errSinkFull
	}
	s.puts = append(s.puts, putRecord{id: id, stored: append([]byte(nil), stored...)})
	return nil
}

// largeTree writes a directory whose files exercise the streaming path:
// incompressible and compressible files above SmallFile, one that
// repeats its own chunks, one of exactly one chunk and a small one.
func largeTree(t *testing.T) (string, map[string][]byte) {
	t.Helper()
	rng := rand.New(rand.NewPCG(14, 4))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	block := random(300 << 10)
	var text []byte
	for len(text) < 3<<20 {
		text = append(text, []byte("the agent read the file and wrote a plan; ")...)
		text = append(text, byte('a'+rng.IntN(26)), '\n')
	}
	files := map[string][]byte{
		"random.bin":   random(5 << 20),
		"text.txt":     text,
		"repeats.bin":  bytes.Repeat(block, 6),
		"one-chunk":    random(tree.SmallFile + 100)[:tree.SmallFile+1],
		"small.txt":    []byte("small"),
		"d/random.bin": random(2<<20 + 7),
	}
	root := t.TempDir()
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, files
}

// TestStreamParallelMatchesSerial checks that hashing and encoding
// chunks on several workers stores exactly what one worker stores
// through a plain Sink: the same root, the same blobs in the same order
// with the same stored bytes, and leaves cut where the chunker cuts the
// whole file.
func TestStreamParallelMatchesSerial(t *testing.T) {
	root, files := largeTree(t)
	serial := &orderSink{}
	want, err := tree.BuildDirWith(root, serial, tree.DirOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2, 8} {
		par := &chunkSink{}
		got, err := tree.BuildDirWith(root, par, tree.DirOptions{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(want) {
			t.Fatalf("%d workers: root %s, serial root %s", workers, got.ID.Short(), want.ID.Short())
		}
		if len(par.puts) != len(serial.puts) {
			t.Fatalf("%d workers: %d puts, serial %d", workers, len(par.puts), len(serial.puts))
		}
		for i := range par.puts {
			if par.puts[i].id != serial.puts[i].id || !bytes.Equal(par.puts[i].stored, serial.puts[i].stored) {
				t.Fatalf("%d workers: put %d is %s, serial %s", workers, i, par.puts[i].id.Short(), serial.puts[i].id.Short())
			}
		}
		if par.encodes == 0 {
			t.Errorf("%d workers: no chunk was encoded by the workers", workers)
		}
	}
	// The leaves are the chunker's cut of the whole file.
	src := newMemStore()
	ref, err := tree.BuildDir(root, src)
	if err != nil {
		t.Fatal(err)
	}
	r := &tree.Reader{Src: src}
	ctx := context.Background()
	err = r.WalkDir(ctx, ref, func(fi tree.FileInfo) error {
		data, ok := files[fi.Path]
		if !ok || len(data) <= tree.SmallFile {
			return nil
		}
		var leaves [][]byte
		if fi.Ref.Kind == tree.Node {
			es, err := r.ListEntries(ctx, fi.Ref, tree.TypeChunks)
			if err != nil {
				return err
			}
			for _, e := range es {
				b, err := src.Blob(ctx, e.Ref.ID)
				if err != nil {
					return err
				}
				leaves = append(leaves, b)
			}
		} else {
			b, err := src.Blob(ctx, fi.Ref.ID)
			if err != nil {
				return err
			}
			leaves = [][]byte{b}
		}
		split := chunker.Default.Split(data)
		if len(leaves) != len(split) {
			t.Errorf("%s: %d leaves, the chunker cuts %d", fi.Path, len(leaves), len(split))
			return nil
		}
		for i := range split {
			if !bytes.Equal(leaves[i], split[i]) {
				t.Errorf("%s: leaf %d differs from the chunker's", fi.Path, i)
				return nil
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestStreamErrors checks that a sink that fails in the middle of a
// large file fails the build with its error, and that the build stops
// there: the sink sees no put after the one that failed.
func TestStreamErrors(t *testing.T) {
	root, _ := largeTree(t)
	for _, at := range []int{1, 2, 50} {
		s := &chunkSink{orderSink: orderSink{failAt: at}}
		if _, err := tree.BuildDirWith(root, s, tree.DirOptions{Workers: 4}); !errors.Is(err, errSinkFull) {
			t.Errorf("sink failing at put %d: %v", at, err)
		}
		if len(s.puts) != at-1 {
			t.Errorf("sink failing at put %d saw %d puts", at, len(s.puts))
		}
	}
}

// stallSink is a chunkSink whose first PutChunk waits until the build
// has encoded ahead chunks past it, as a spiller waits while it builds
// a pack or a PUT is slow.
type stallSink struct {
	chunkSink
	ahead   int
	reached chan struct{} // closed when ahead chunks were encoded
	closed  bool          // reached is closed
	stalled bool
	most    int // encodes seen by the stalled put
}

func (s *stallSink) EncodeChunk(id cas.ID, raw, dst []byte) []byte {
	out := s.chunkSink.EncodeChunk(id, raw, dst)
	s.mu.Lock()
	if s.encodes >= s.ahead && !s.closed {
		s.closed = true
		close(s.reached)
	}
	s.mu.Unlock()
	return out
}

func (s *stallSink) PutChunk(id cas.ID, raw, stored []byte) error {
	if !s.stalled {
		s.stalled = true
		// A guard against a hang only: the build either encodes ahead
		// chunks while this put waits or never does.
		select {
		case <-s.reached:
		case <-time.After(time.Minute):
		}
		s.mu.Lock()
		s.most = s.encodes
		s.mu.Unlock()
	}
	return s.chunkSink.PutChunk(id, raw, stored)
}

// TestStreamKeepsWorkersBusyWhileSinkStalls checks that while the sink
// takes its time over one chunk, the workers go on hashing and encoding
// the chunks behind it: at least 32 a worker (up to the cap on chunks in
// flight), which at 16 KiB chunks is ~1 MiB, several milliseconds of
// compression. With too short a queue the workers of a large commit sat
// idle whenever the spiller built a pack or waited on a PUT.
func TestStreamKeepsWorkersBusyWhileSinkStalls(t *testing.T) {
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 7))
	data := make([]byte, 4<<20)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	if err := os.WriteFile(filepath.Join(root, "big.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	const workers, ahead = 2, 64
	if n := len(chunker.Default.Split(data)); n <= ahead+1 {
		t.Fatalf("test file has %d chunks, want more than %d", n, ahead+1)
	}
	s := &stallSink{ahead: ahead, reached: make(chan struct{})}
	if _, err := tree.BuildDirWith(root, s, tree.DirOptions{Workers: workers}); err != nil {
		t.Fatal(err)
	}
	if s.most < ahead {
		t.Errorf("while the first chunk waited to be stored, %d chunks were encoded; want at least %d", s.most, ahead)
	}
}
