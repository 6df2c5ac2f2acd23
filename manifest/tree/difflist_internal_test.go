package tree

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas"
)

// blobMap is a Sink and Source in memory that counts the blobs read.
type blobMap struct {
	blobs map[cas.ID][]byte
	reads int
}

func (m *blobMap) Put(id cas.ID, raw []byte) error {
	m.blobs[id] = append([]byte(nil), raw...)
	return nil
}

func (m *blobMap) Blob(_ context.Context, id cas.ID) ([]byte, error) {
	m.reads++
	b, ok := m.blobs[id]
	if !ok {
		return nil, cas.ErrNotFound
	}
	return b, nil
}

// listDoc is a document around one long array of small objects.
func listDoc(items []string) []byte {
	return []byte(`{"head":1,"messages":[` + strings.Join(items, ",") + `],"tail":"t"}`)
}

func item(r *rand.Rand, i int) string {
	return fmt.Sprintf(`{"role":"user","i":%d,"text":"%s"}`, i, strings.Repeat(string(rune('a'+r.IntN(26))), 20+r.IntN(80)))
}

// diffBoth returns the node diff of a and b, the text diff of the same
// documents (the positional, member by member definition), and the
// blobs the node diff read.
func diffBoth(t *testing.T, a, b []byte) (nodes, text []string, reads int) {
	t.Helper()
	m := &blobMap{blobs: map[cas.ID][]byte{}}
	ra, err := BuildJSON(a, m)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := BuildJSON(b, m)
	if err != nil {
		t.Fatal(err)
	}
	m.reads = 0
	err = (&Reader{Src: m}).DiffJSON(context.Background(), ra, rb, func(c Change) error {
		nodes = append(nodes, string(c.Kind)+" "+c.Path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = diffText("", a, b, func(c Change) error {
		text = append(text, string(c.Kind)+" "+c.Path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return nodes, text, m.reads
}

// TestDiffListsAgreesWithText checks the diff of stored arrays, which
// steps over shared subtrees, against the positional diff of the texts:
// appends, inserts and removals anywhere (which shift every later
// index), replacements, nested changes, and arrays emptied or created.
func TestDiffListsAgreesWithText(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for trial := range 120 {
		n := []int{0, 1, 40, 600, 3000}[trial%5]
		var items []string
		for i := range n {
			items = append(items, item(r, i))
		}
		next := slices.Clone(items)
		for range 1 + r.IntN(3) {
			switch op := r.IntN(6); {
			case op == 0 || len(next) == 0:
				next = append(next, item(r, 1e6+r.IntN(1000)))
			case op == 1:
				at := r.IntN(len(next) + 1)
				next = slices.Insert(next, at, item(r, 2e6))
			case op == 2:
				at := r.IntN(len(next))
				next = slices.Delete(next, at, at+1)
			case op == 3:
				next[r.IntN(len(next))] = item(r, 3e6)
			case op == 4:
				at := r.IntN(len(next))
				next[at] = strings.Replace(next[at], `"role":"user"`, `"role":"tool","extra":[1,2]`, 1)
			default:
				next = next[:r.IntN(len(next)+1)]
			}
		}
		nodes, text, _ := diffBoth(t, listDoc(items), listDoc(next))
		if !slices.Equal(nodes, text) {
			t.Fatalf("trial %d (%d → %d items): node diff\n%q\nwant (text diff)\n%q", trial, len(items), len(next), nodes, text)
		}
	}
}

// TestDiffListsAppendReadsLittle: appending to a long array reads the
// nodes on its last path, not the whole array.
func TestDiffListsAppendReadsLittle(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	var items []string
	for i := range 20000 {
		items = append(items, item(r, i))
	}
	next := append(slices.Clone(items), item(r, 20000))
	nodes, _, reads := diffBoth(t, listDoc(items), listDoc(next))
	if want := []string{"added /messages/20000"}; !slices.Equal(nodes, want) {
		t.Fatalf("diff = %q, want %q", nodes, want)
	}
	// The array is stored as hundreds of leaves under a few levels of
	// list nodes; reading it whole is hundreds of blobs.
	if reads > 40 {
		t.Errorf("an append to a 20,000-element array read %d blobs; want the nodes of its last path", reads)
	}
}

// FuzzDiffLists: whatever the array and its edits, the diff of stored
// arrays is the positional diff of their texts.
func FuzzDiffLists(f *testing.F) {
	f.Add(uint64(1), uint16(700), []byte{0, 1, 2})
	f.Add(uint64(2), uint16(0), []byte{0})
	f.Add(uint64(3), uint16(3000), []byte{5, 5, 1, 3})
	f.Fuzz(func(t *testing.T, seed uint64, n uint16, ops []byte) {
		r := rand.New(rand.NewPCG(seed, 1))
		var items []string
		for i := range int(n % 4000) {
			items = append(items, item(r, i))
		}
		next := slices.Clone(items)
		for _, op := range ops[:min(len(ops), 8)] {
			if len(next) == 0 {
				next = append(next, item(r, 9e6))
				continue
			}
			at := r.IntN(len(next))
			switch op % 5 {
			case 0:
				next = append(next, item(r, 1e6))
			case 1:
				next = slices.Insert(next, at, item(r, 2e6))
			case 2:
				next = slices.Delete(next, at, at+1)
			case 3:
				next[at] = `[` + next[at] + `]`
			default:
				next = next[:at]
			}
		}
		nodes, text, _ := diffBoth(t, listDoc(items), listDoc(next))
		if !slices.Equal(nodes, text) {
			t.Fatalf("node diff\n%q\nwant (text diff)\n%q", nodes, text)
		}
	})
}
