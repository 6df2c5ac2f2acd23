package manifest_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

// TestCompactionNodeLookalike: a small file whose bytes are exactly a
// tree node of the same state (here z.bin's chunk list) has that node's
// id. Compaction met it first as a blob, marked the id seen and never
// walked below the node, dropping z.bin's chunks from every later
// layout (3ec4591: "blob ... is not in any object of the step's layout").
func TestCompactionNodeLookalike(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(8, 8))
	z := make([]byte, 300<<10)
	for i := range z {
		z[i] = byte(rng.Uint32())
	}
	// Find the chunk list node of z.bin as a state of its own.
	nodes := map[cas.ID][]byte{}
	zdir := t.TempDir()
	if err := os.WriteFile(filepath.Join(zdir, "z.bin"), z, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tree.BuildDir(zdir, nodeCollector(nodes)); err != nil {
		t.Fatal(err)
	}
	var node []byte
	for _, raw := range nodes {
		if n, err := tree.DecodeNode(raw, "probe"); err == nil && n.Type == tree.TypeChunks {
			node = raw
		}
	}
	if node == nil {
		t.Fatal("z.bin has no chunk list node")
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{"a.bin": node, "z.bin": z} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	backend := mem.New()
	repo := manifest.NewRepo(backend, 0)
	ix := repo.NewIndex()
	var head *manifest.Step
	for i := range 6 {
		if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte(strings.Repeat("n", i+40)), 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := repo.Commit(ctx, head, ix, manifest.CommitInput{Session: "h", Fanout: 2,
			Build: func(sink tree.Sink, known func(cas.ID) bool) (manifest.StateKind, tree.Ref, error) {
				ref, err := tree.BuildDir(dir, sink)
				return manifest.StateDir, ref, err
			}})
		if err != nil {
			t.Fatal(err)
		}
		head = st
	}
	if len(head.Layout.Packs) == 0 {
		t.Fatal("no compaction happened")
	}
	for n := uint64(1); n <= head.Number; n++ {
		st, err := repo.ReadStep(ctx, "h", n)
		if err != nil {
			t.Fatal(err)
		}
		rix := repo.NewIndex()
		if err := rix.Load(ctx, st.Layout); err != nil {
			t.Fatal(err)
		}
		r := &tree.Reader{Src: rix}
		err = r.WalkDir(ctx, st.Root, func(fi tree.FileInfo) error {
			if fi.Path != "z.bin" {
				return nil
			}
			var out bytes.Buffer
			if err := r.WriteBytes(ctx, &out, fi.Ref); err != nil {
				return err
			}
			if !bytes.Equal(out.Bytes(), z) {
				t.Errorf("step %d: z.bin reads back different bytes", n)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("step %d: %v", n, err)
		}
	}
}

// nodeCollector is a tree.Sink that keeps every blob it is given.
type nodeCollector map[cas.ID][]byte

func (c nodeCollector) Put(id cas.ID, raw []byte) error {
	c[id] = append([]byte(nil), raw...)
	return nil
}
