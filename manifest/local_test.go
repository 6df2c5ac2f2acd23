package manifest_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/cas/metered"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

// localMap is a manifest.LocalObjects in memory.
type localMap map[string][]byte

func (m localMap) Object(key string) []byte     { return m[key] }
func (m localMap) Keep(key string, data []byte) { m[key] = bytes.Clone(data) }
func (m localMap) Drop(key string)              { delete(m, key) }
func (m localMap) keys(prefix string) (k []string) {
	for key := range m {
		if strings.HasPrefix(key, prefix) {
			k = append(k, key)
		}
	}
	return k
}

// chatDoc is step n of a chat whose every step appends a message of
// incompressible text: each state reaches every earlier message, so a
// merge copies blobs of every merged object.
func chatDoc(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"messages":[`)
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		rng := rand.New(rand.NewPCG(uint64(i), 1))
		msg := make([]byte, 3000)
		for j := range msg {
			msg[j] = 'a' + byte(rng.IntN(26))
		}
		fmt.Fprintf(&b, `{"step":%d,"text":"%s"}`, i, msg)
	}
	fmt.Fprintf(&b, `],"step":%d}`, n)
	return []byte(b.String())
}

func commitJSON(t *testing.T, repo *manifest.Repo, head *manifest.Step, ix *manifest.Index, doc []byte, fanout int) *manifest.Step {
	t.Helper()
	st, err := repo.Commit(context.Background(), head, ix, manifest.CommitInput{Session: "s", Fanout: fanout,
		Build: func(sink tree.Sink, _ func(cas.ID) bool) (manifest.StateKind, tree.Ref, error) {
			ref, err := tree.BuildJSON(doc, sink)
			return manifest.StateJSON, ref, err
		}})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestLocalObjectsMerge: a commit in a fresh process (a new Repo, its
// head and index restored from a snapshot, as the CLI's head cache does)
// merges the step objects a previous process wrote, reading them from
// its local copies instead of the store. A copy is used only if it holds
// exactly the blobs the index places in that object, each decoding to
// its id: a damaged copy (caught by its checksum, or with the checksum
// made to match, by its blob's hash), another object's bytes at that key (whose
// blobs all decode, but not at the offsets the index gives, so copying
// them would write a corrupt pack) or a missing copy each cost one GET,
// and the pack is right every time.
func TestLocalObjectsMerge(t *testing.T) {
	const fanout = 4
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		spoil func(local localMap, steps []string)
		gets  int64
	}{
		{"intact", func(localMap, []string) {}, 0},
		{"damaged", func(l localMap, k []string) {
			c := bytes.Clone(l[k[1]])
			c[len(c)-10] ^= 0xff
			l[k[1]] = c
		}, 1},
		{"damaged blob, whole-object checksum redone", func(l localMap, k []string) {
			c := bytes.Clone(l[k[1]])
			obj, err := pack.Parse(c, k[1])
			if err != nil {
				t.Fatal(err)
			}
			e := obj.Entries[len(obj.Entries)-1]
			c[e.Offset+e.StoredLen/2] ^= 0xff
			sum := cas.Sum(c[:len(c)-cas.IDSize])
			copy(c[len(c)-cas.IDSize:], sum[:])
			l[k[1]] = c
		}, 1},
		{"another object", func(l localMap, k []string) { l[k[1]] = l[k[2]] }, 1},
		{"missing", func(l localMap, k []string) { delete(l, k[1]) }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backend := mem.New()
			local := localMap{}
			// The first process: fanout steps, its index saved.
			first := manifest.NewRepo(backend, 0)
			first.UseLocalObjects(local)
			ix := first.NewIndex()
			var head *manifest.Step
			for n := 1; n <= fanout; n++ {
				head = commitJSON(t, first, head, ix, chatDoc(n), fanout)
			}
			snap, ok := ix.Snapshot(head.Layout)
			if !ok {
				t.Fatal("no snapshot of the writer's index")
			}
			steps := local.keys("steps/s/")
			if len(steps) != fanout {
				t.Fatalf("local copies of %d step objects, want %d: %v", len(steps), fanout, keysOf(local))
			}
			sort.Strings(steps)
			tc.spoil(local, steps)

			// The next process: the step that merges them.
			m := metered.New(backend)
			next := manifest.NewRepo(m, 0)
			next.UseLocalObjects(local)
			h, ix2, err := next.RestoreHead("s", head.Manifest.Encode(), head.ID, snap)
			if err != nil {
				t.Fatal(err)
			}
			h = commitJSON(t, next, h, ix2, chatDoc(fanout+1), fanout)
			if h.Layout.Packs == nil {
				t.Fatalf("step %d merged nothing: layout %+v", h.Number, h.Layout)
			}
			if got := m.Counts().Get; got != tc.gets {
				t.Errorf("the merging commit made %d GETs, want %d", got, tc.gets)
			}
			// The pack and the state read back right from the store alone.
			reader := manifest.NewRepo(backend, 0)
			rep, err := reader.Verify(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Problems) != 0 {
				t.Fatalf("verify: %+v", rep.Problems)
			}
			st, err := reader.ReadStep(ctx, "s", h.Number)
			if err != nil {
				t.Fatal(err)
			}
			rix := reader.NewIndex()
			if err := rix.Load(ctx, st.Layout); err != nil {
				t.Fatal(err)
			}
			got, err := (&tree.Reader{Src: rix}).JSON(ctx, st.Root)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, chatDoc(fanout+1)) {
				t.Fatal("the merged step reads back a different document")
			}
			// The merged objects' copies are gone; the merging step's
			// object, the pack, is kept for the next level's merge.
			want := []string{manifest.StepKey("s", h.Number)}
			if got := keysOf(local); !slices.Equal(got, want) {
				t.Errorf("local copies after the merge: %v, want %v", got, want)
			}
		})
	}
}

func keysOf(m localMap) []string { return slices.Sorted(maps.Keys(m)) }
