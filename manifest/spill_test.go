package manifest_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/chunker"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/cas/metered"
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

// spillState writes a directory holding a file of size random bytes
// (seeded) and a small note, and returns it with the file's bytes.
func spillState(t testing.TB, seed uint64, size int) (string, []byte) {
	t.Helper()
	data := make([]byte, size)
	rng := rand.New(rand.NewPCG(seed, 0x5111))
	for i := 0; i < len(data); i += 8 {
		v := rng.Uint64()
		for j := 0; j < 8 && i+j < len(data); j++ {
			data[i+j] = byte(v >> (8 * j))
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte("a small file next to a large one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, data
}

// commitDir commits the directory at dir after head, hashing and
// encoding its large files on workers goroutines.
func commitDir(t testing.TB, repo *manifest.Repo, head *manifest.Step, ix *manifest.Index, session, dir string, workers, fanout int) (*manifest.Step, error) {
	t.Helper()
	return repo.Commit(context.Background(), head, ix, manifest.CommitInput{
		Session: session,
		Fanout:  fanout,
		Build: func(sink tree.Sink, known func(cas.ID) bool) (manifest.StateKind, tree.Ref, error) {
			ref, err := tree.BuildDirWith(dir, sink, tree.DirOptions{Workers: workers})
			return manifest.StateDir, ref, err
		},
	})
}

// readFile returns the bytes of the file at name in step n of session,
// read back through a fresh repo over store (nothing cached).
func readFile(t testing.TB, store cas.Store, session string, n uint64, name string) []byte {
	t.Helper()
	ctx := context.Background()
	repo := manifest.NewRepo(store, 0)
	st, err := repo.ReadStep(ctx, session, n)
	if err != nil {
		t.Fatal(err)
	}
	ix := repo.NewIndex()
	if err := ix.Load(ctx, st.Layout); err != nil {
		t.Fatal(err)
	}
	r := &tree.Reader{Src: ix}
	var out bytes.Buffer
	found := false
	err = r.WalkDir(ctx, st.Root, func(fi tree.FileInfo) error {
		if fi.Path != name {
			return nil
		}
		found = true
		return r.WriteBytes(ctx, &out, fi.Ref)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Fatalf("%s@%d has no file %s", session, n, name)
	}
	return out.Bytes()
}

// keysUnder lists the keys of store under prefix.
func keysUnder(t testing.TB, store cas.Store, prefix string) []string {
	t.Helper()
	var keys []string
	err := store.List(context.Background(), prefix, "", func(i cas.Info) error {
		keys = append(keys, i.Key)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// spillKeys returns the spill pack keys of store, sorted.
func spillKeys(t testing.TB, store cas.Store) []string {
	var out []string
	for _, k := range keysUnder(t, store, "packs/") {
		if _, _, _, ok := manifest.ParseSpillKey(k); ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// TestSpillLargeStep commits a state whose new chunks outgrow
// SpillThreshold: they go to spill packs of bounded size written before
// the step object, which stays small and names them; the state reads
// back byte for byte; a commit of the same state again writes no pack
// (dedup) and a small step after it is one PUT.
func TestSpillLargeStep(t *testing.T) {
	ctx := context.Background()
	backend := mem.New()
	m := metered.New(backend)
	repo := manifest.NewRepo(m, 0)
	dir, data := spillState(t, 1, 3*manifest.SpillThreshold+12345)
	ix := repo.NewIndex()
	st, err := commitDir(t, repo, nil, ix, "big", dir, 0, manifest.DefaultFanout)
	if err != nil {
		t.Fatal(err)
	}
	keys := spillKeys(t, backend)
	if len(keys) < 2 {
		t.Fatalf("a %d-byte state wrote %d spill packs: %v", len(data), len(keys), keys)
	}
	for _, k := range keys {
		info, err := backend.Stat(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if info.Size > manifest.SpillThreshold+(1<<20) {
			t.Errorf("spill pack %s holds %d bytes, threshold %d", k, info.Size, manifest.SpillThreshold)
		}
	}
	if st.Size > manifest.SpillThreshold+(1<<20) {
		t.Errorf("step object of %d bytes", st.Size)
	}
	if len(st.Layout.Spills) == 0 {
		t.Fatalf("layout names no spill packs: %+v", st.Layout)
	}
	if got := manifest.LayoutKeys(manifest.Layout{Spills: st.Layout.Spills}); strings.Join(got, " ") != strings.Join(keys, " ") {
		t.Errorf("layout names %v, store holds %v", got, keys)
	}
	if got := readFile(t, backend, "big", 1, "big.bin"); !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, differing from the %d committed", len(got), len(data))
	}

	// The same state again: every chunk dedups, nothing spills, 1 PUT.
	before := m.Counts()
	st2, err := commitDir(t, repo, st, ix, "big", dir, 0, manifest.DefaultFanout)
	if err != nil {
		t.Fatal(err)
	}
	if c := m.Counts().Sub(before); c.Put != 1 {
		t.Errorf("recommitting the same large state: %d PUTs, want 1", c.Put)
	}
	if n := len(spillKeys(t, backend)); n != len(keys) {
		t.Errorf("recommitting the same large state wrote %d spill packs", n-len(keys))
	}
	// A small change: one PUT, and the layout still names the packs.
	if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before = m.Counts()
	st3, err := commitDir(t, repo, st2, ix, "big", dir, 0, manifest.DefaultFanout)
	if err != nil {
		t.Fatal(err)
	}
	if c := m.Counts().Sub(before); c.Put != 1 {
		t.Errorf("small step after a large one: %d PUTs, want 1", c.Put)
	}
	if len(st3.Layout.Spills) == 0 {
		t.Errorf("a child's layout lost its parent's spill packs")
	}
	rep, err := repo.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 0 {
		t.Errorf("verify: %+v", rep.Problems)
	}
	// Usage counts the spill packs as live, and the state at its size.
	u, err := repo.Usage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if u.GarbageObjects != 0 || u.LiveObjects != u.Objects || u.Objects < len(keys)+3 {
		t.Errorf("usage: %d objects, %d live, %d garbage; %d spill packs", u.Objects, u.LiveObjects, u.GarbageObjects, len(keys))
	}
	if len(u.Sessions) != 1 || u.Sessions[0].LogicalBytes < 3*int64(len(data)) {
		t.Errorf("usage: %+v, want 3 steps of %d bytes", u.Sessions, len(data))
	}
	// A gc keeps every spill pack: they are all live.
	for range 2 {
		if _, err := repo.GC(ctx, manifest.GCOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(spillKeys(t, backend)); n != len(keys) {
		t.Errorf("gc left %d of %d live spill packs", n, len(keys))
	}
	if got := readFile(t, backend, "big", 3, "big.bin"); !bytes.Equal(got, data) {
		t.Fatalf("step 3 reads back different bytes after gc")
	}
}

// TestSpillSerialEqualsParallel commits the same large state with one
// worker and with several into two stores: the same root and the same
// spill packs, byte for byte.
func TestSpillSerialEqualsParallel(t *testing.T) {
	ctx := context.Background()
	dir, _ := spillState(t, 2, 2*manifest.SpillThreshold+999)
	var roots []tree.Ref
	var packs [][][]byte
	for _, workers := range []int{1, 4} {
		backend := mem.New()
		repo := manifest.NewRepo(backend, 0)
		st, err := commitDir(t, repo, nil, nil, "s", dir, workers, 0)
		if err != nil {
			t.Fatal(err)
		}
		roots = append(roots, st.Root)
		var objs [][]byte
		for _, k := range spillKeys(t, backend) {
			b, err := backend.Get(ctx, k, 0, -1)
			if err != nil {
				t.Fatal(err)
			}
			objs = append(objs, b)
		}
		packs = append(packs, objs)
	}
	if !roots[0].Equal(roots[1]) {
		t.Errorf("roots differ: %s serial, %s parallel", roots[0].ID.Short(), roots[1].ID.Short())
	}
	if len(packs[0]) == 0 || len(packs[0]) != len(packs[1]) {
		t.Fatalf("%d spill packs serial, %d parallel", len(packs[0]), len(packs[1]))
	}
	for i := range packs[0] {
		if !bytes.Equal(packs[0][i], packs[1][i]) {
			t.Errorf("spill pack %d differs between serial and parallel builds", i+1)
		}
	}
}

// crashBeforeStep is a store on which the step object of one slot never
// lands: the process dies between its spill packs and its manifest.
type crashBeforeStep struct {
	cas.Store
	key string
}

var errCrash = errors.New("crashed before the step object")

func (s *crashBeforeStep) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	if key == s.key {
		return errCrash
	}
	return s.Store.Put(ctx, key, data, opts)
}

// TestSpillCrash: a commit that dies after writing its spill packs and
// before its step object leaves the session at its last step; gc keeps
// the orphans while the slot is empty (a writer may still be in flight)
// and deletes them once the slot is filled by a retry, which writes its
// own packs under fresh keys and never overwrites the orphans.
func TestSpillCrash(t *testing.T) {
	ctx := context.Background()
	backend := mem.New()
	repo := manifest.NewRepo(backend, 0)
	small := t.TempDir()
	if err := os.WriteFile(filepath.Join(small, "a"), []byte("step one"), 0o644); err != nil {
		t.Fatal(err)
	}
	st1, err := commitDir(t, repo, nil, nil, "s", small, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	dir, data := spillState(t, 3, 2*manifest.SpillThreshold+5)
	crashy := manifest.NewRepo(&crashBeforeStep{Store: backend, key: manifest.StepKey("s", 2)}, 0)
	if _, err := commitDir(t, crashy, st1, nil, "s", dir, 0, 0); !errors.Is(err, errCrash) {
		t.Fatalf("commit over a crashing store: %v", err)
	}
	orphans := spillKeys(t, backend)
	if len(orphans) == 0 {
		t.Fatal("the crashed commit wrote no spill pack first")
	}
	if head, err := repo.FindHead(ctx, "s"); err != nil || head != 1 {
		t.Fatalf("head after the crash = %d, %v; want 1", head, err)
	}
	if got := readFile(t, backend, "s", 1, "a"); string(got) != "step one" {
		t.Fatalf("step 1 reads %q", got)
	}
	// The slot is empty: a writer may be about to fill it, so gc keeps
	// its packs whatever the grace.
	for range 2 {
		if _, err := repo.GC(ctx, manifest.GCOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := spillKeys(t, backend); len(got) != len(orphans) {
		t.Fatalf("gc deleted in-flight spill packs: %d of %d left", len(got), len(orphans))
	}
	// The retry fills the slot with packs of its own.
	st2, err := commitDir(t, repo, st1, nil, "s", dir, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, k := range manifest.LayoutKeys(manifest.Layout{Spills: st2.Layout.Spills}) {
		named[k] = true
	}
	for _, k := range orphans {
		if named[k] {
			t.Fatalf("the retry names the crashed commit's pack %s", k)
		}
	}
	for range 2 {
		if _, err := repo.GC(ctx, manifest.GCOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	left := spillKeys(t, backend)
	for _, k := range left {
		if !named[k] {
			t.Errorf("gc kept orphan %s", k)
		}
	}
	if len(left) != len(named) {
		t.Errorf("%d spill packs left, the step names %d", len(left), len(named))
	}
	if got := readFile(t, backend, "s", 2, "big.bin"); !bytes.Equal(got, data) {
		t.Fatal("step 2 reads back different bytes")
	}
	rep, err := repo.Verify(ctx)
	if err != nil || len(rep.Problems) != 0 {
		t.Fatalf("verify: %v %+v", err, rep)
	}
}

// TestSpillCompaction: compaction after a spilled step merges its nodes
// and leaves its spill packs named, so every step still reads back.
func TestSpillCompaction(t *testing.T) {
	ctx := context.Background()
	backend := mem.New()
	repo := manifest.NewRepo(backend, 0)
	dir, data := spillState(t, 4, manifest.SpillThreshold+77777)
	ix := repo.NewIndex()
	var head *manifest.Step
	var packs int
	for i := range 12 {
		if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte(strings.Repeat("x", i+40)), 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := commitDir(t, repo, head, ix, "c", dir, 0, 2)
		if err != nil {
			t.Fatal(err)
		}
		head = st
		packs = max(packs, len(st.Layout.Packs))
	}
	if packs == 0 {
		t.Fatal("no compaction happened")
	}
	if len(head.Layout.Spills) == 0 {
		t.Fatal("compaction dropped the spill packs from the layout")
	}
	for n := uint64(1); n <= head.Number; n++ {
		if got := readFile(t, backend, "c", n, "big.bin"); !bytes.Equal(got, data) {
			t.Fatalf("step %d reads back different bytes", n)
		}
	}
	rep, err := repo.Verify(ctx)
	if err != nil || len(rep.Problems) != 0 {
		t.Fatalf("verify: %v %+v", err, rep)
	}
}

// FuzzParseSpillKey checks that a key read from a listing parses as a
// spill pack's only if it is exactly the key SpillKey gives for what it
// parses to, so gc never mistakes another key for one.
func FuzzParseSpillKey(f *testing.F) {
	f.Add(manifest.SpillKey("s", 1, 1))
	f.Add(manifest.SpillKey("a.b-c", 1<<40, manifest.MaxSpills))
	f.Add(manifest.PackKey("s", 3))
	f.Add("packs/s/00000000000000000001.1")
	f.Add("packs/s.000001/00000000000000000001.000001")
	f.Fuzz(func(t *testing.T, key string) {
		s, n, k, ok := manifest.ParseSpillKey(key)
		if !ok {
			return
		}
		if manifest.ValidSession(s) != nil || n == 0 || k == 0 || k > manifest.MaxSpills {
			t.Fatalf("%q parses to %q, %d, %d", key, s, n, k)
		}
		if again := manifest.SpillKey(s, n, k); again != key {
			t.Fatalf("%q parses to %q, %d, %d, whose key is %q", key, s, n, k, again)
		}
	})
}

// TestSpillNodeLookalike: a hostile file whose last chunk has exactly
// the bytes of a tree node of the same state puts that node's id in a
// spill pack (the node dedups against the chunk). Compaction must still
// walk below it: its children live in the step object it merges, and
// skipping them would drop them from every later layout.
func TestSpillNodeLookalike(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 7))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	// z.bin is a large file: its state is a chunk list node.
	z := random(300 << 10)
	probe := mem.New()
	probeRepo := manifest.NewRepo(probe, 0)
	zdir := t.TempDir()
	if err := os.WriteFile(filepath.Join(zdir, "z.bin"), z, 0o644); err != nil {
		t.Fatal(err)
	}
	var node []byte
	_, err := probeRepo.Commit(ctx, nil, nil, manifest.CommitInput{Session: "p",
		Build: func(sink tree.Sink, known func(cas.ID) bool) (manifest.StateKind, tree.Ref, error) {
			ref, err := tree.BuildDirWith(zdir, sinkSpy{sink, func(id cas.ID, raw []byte) {
				if n, err := tree.DecodeNode(raw, "probe"); err == nil && n.Type == tree.TypeChunks {
					node = append([]byte(nil), raw...)
				}
			}}, tree.DirOptions{})
			return manifest.StateDir, ref, err
		}})
	if err != nil {
		t.Fatal(err)
	}
	if node == nil || len(node) > 4<<10 {
		t.Fatalf("no small chunk list node for z.bin (%d bytes)", len(node))
	}
	// a.bin ends with a chunk of exactly the node's bytes: cut the
	// random prefix at one of its own chunk boundaries.
	r := random(200 << 10)
	bs := chunker.Default.Boundaries(r)
	a := append(append([]byte(nil), r[:bs[len(bs)-2]]...), node...)
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"a.bin": a,
		"c.bin": random(manifest.SpillThreshold + 1<<20), // spills a.bin's chunks
		"z.bin": z,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	backend := mem.New()
	repo := manifest.NewRepo(backend, 0)
	ix := repo.NewIndex()
	var head *manifest.Step
	for i := range 6 {
		if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte(strings.Repeat("y", i+40)), 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := commitDir(t, repo, head, ix, "h", dir, 0, 2)
		if err != nil {
			t.Fatal(err)
		}
		head = st
	}
	if len(head.Layout.Packs) == 0 {
		t.Fatal("no compaction happened")
	}
	nodeID := cas.Sum(node)
	if loc, ok := ix.Locate(nodeID); !ok {
		t.Fatal("the node is not indexed")
	} else if _, _, _, spilled := manifest.ParseSpillKey(loc.Key); !spilled {
		t.Fatalf("the node is in %s, not in a spill pack: the test does not test the case", loc.Key)
	}
	for n := uint64(1); n <= head.Number; n++ {
		if got := readFile(t, backend, "h", n, "z.bin"); !bytes.Equal(got, z) {
			t.Fatalf("step %d: z.bin reads back different bytes", n)
		}
	}
	rep, err := repo.Verify(ctx)
	if err != nil || len(rep.Problems) != 0 {
		t.Fatalf("verify: %v %+v", err, rep)
	}
}

// sinkSpy passes puts on and shows each to fn.
type sinkSpy struct {
	tree.Sink
	fn func(cas.ID, []byte)
}

func (s sinkSpy) Put(id cas.ID, raw []byte) error {
	s.fn(id, raw)
	return s.Sink.Put(id, raw)
}
