package manifest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

type builderSink struct{ b *pack.Builder }

func (s builderSink) Put(id cas.ID, raw []byte) error { s.b.Add(id, raw); return nil }

// seedStepObjects returns whole step objects as a writer stores them: a
// structural JSON state and a directory state, each self-contained.
func seedStepObjects(t testing.TB) [][]byte {
	var out [][]byte
	doc := []byte(`{"messages":[` + fmt.Sprintf(`{"role":"user","content":"%0500d"},{"role":"assistant","content":"%0700d"}`, 1, 2) + `],"plan":{"next":1.50}}`)
	var b pack.Builder
	root, err := tree.BuildJSON(doc, builderSink{&b})
	if err != nil {
		t.Fatal(err)
	}
	m := &manifest.Manifest{Session: "s", Number: 1, Time: time.Unix(0, 0).UTC(), Kind: manifest.StateJSON, Root: root,
		Layout: manifest.Layout{Steps: []manifest.Range{{Session: "s", First: 1, Last: 1}}}}
	data, _ := b.Build(pack.KindStep, m.Encode())
	out = append(out, data)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.Symlink("../a.txt", filepath.Join(dir, "sub", "l"))
	var b2 pack.Builder
	root, err = tree.BuildDir(dir, builderSink{&b2})
	if err != nil {
		t.Fatal(err)
	}
	m = &manifest.Manifest{Session: "s", Number: 1, Time: time.Unix(0, 0).UTC(), Kind: manifest.StateDir, Root: root,
		Layout: manifest.Layout{Steps: []manifest.Range{{Session: "s", First: 1, Last: 1}}}}
	data, _ = b2.Build(pack.KindStep, m.Encode())
	return append(out, data)
}

// FuzzReadStep feeds arbitrary bytes to the whole read path, as a
// hostile store would serve them for a step object: parse, manifest,
// layout, and the state's tree (JSON text, or directory walk). Nothing
// may panic or run away; every failure is an error.
func FuzzReadStep(f *testing.F) {
	for _, s := range seedStepObjects(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := context.Background()
		store := mem.New()
		key := manifest.StepKey("s", 1)
		if err := store.Put(ctx, key, data, cas.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		repo := manifest.NewRepo(store, 1<<20)
		repo.SetMaxObjectBytes(1 << 20)
		st, err := repo.ReadStep(ctx, "s", 1)
		if err != nil {
			return
		}
		ix := repo.NewIndex()
		if err := ix.Load(ctx, st.Layout); err != nil {
			return
		}
		r := &tree.Reader{Src: ix, Limits: tree.Limits{MaxDepth: 64, MaxBytes: 1 << 20}}
		switch st.Kind {
		case manifest.StateJSON:
			r.JSON(ctx, st.Root)
		case manifest.StateDir:
			r.WalkDir(ctx, st.Root, func(fi tree.FileInfo) error {
				if fi.Mode != tree.ModeDir {
					return r.WriteBytes(ctx, discard{}, fi.Ref)
				}
				return nil
			})
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestWriteStepCorpus rewrites FuzzReadStep's committed seeds (with -update).
func TestWriteStepCorpus(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite testdata/fuzz")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzReadStep")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, s := range seedStepObjects(t) {
		text := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("step-object-%d", i)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
