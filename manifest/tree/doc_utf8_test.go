package tree_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairnlog/cairn/manifest/tree"
)

// utf8Doc is a document whose strings hold runes of every length.
func utf8Doc(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"msgs":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"text":"aé€𝄞 ` + strings.Repeat("ünï", i%7) + `"}`)
	}
	b.WriteString(`],"tail":"ok"}`)
	return []byte(b.String())
}

// Build refuses invalid UTF-8 anywhere in a first version, and in what a
// later version changes, with ErrSyntax and an offset; the Doc is left as
// it was, and a valid version after it builds as BuildJSON does.
func TestDocBuildRefusesInvalidUTF8(t *testing.T) {
	first := []byte(`{"a":"x` + "\xff" + `y"}`)
	d := tree.NewDoc()
	if _, err := d.Build(first, discard{}); !errors.Is(err, tree.ErrSyntax) || !strings.Contains(err.Error(), "offset 7") {
		t.Fatalf("first build of invalid UTF-8: %v; want ErrSyntax at offset 7", err)
	}
	base := utf8Doc(300)
	root, err := d.Build(base, discard{})
	if err != nil {
		t.Fatal(err)
	}
	d.Commit()
	for _, c := range []struct {
		name string
		edit func([]byte) []byte
	}{
		{"stray byte in the middle", func(b []byte) []byte {
			i := bytes.Index(b[len(b)/2:], []byte("ünï")) + len(b)/2
			return append(append(append([]byte{}, b[:i]...), 0xff), b[i:]...)
		}},
		// The lead byte stays in the common prefix; only the
		// continuation byte after it changes.
		{"continuation byte replaced", func(b []byte) []byte {
			i := bytes.Index(b[len(b)/2:], []byte("é")) + len(b)/2
			b = bytes.Clone(b)
			b[i+1] = 'x'
			return b
		}},
		// Only the lead byte changes: the continuation bytes after it,
		// in the common suffix, are stray.
		{"lead byte replaced", func(b []byte) []byte {
			i := bytes.Index(b[len(b)/2:], []byte("€")) + len(b)/2
			b = bytes.Clone(b)
			b[i] = 'x'
			return b
		}},
		{"rune cut at the end of the change", func(b []byte) []byte {
			i := bytes.Index(b[len(b)/2:], []byte("𝄞")) + len(b)/2
			return append(append([]byte{}, b[:i+2]...), b[i+4:]...)
		}},
		{"surrogate half", func(b []byte) []byte {
			i := len(b) - len(`"}`)
			return append(append(append([]byte{}, b[:i]...), "\xed\xa0\x80"...), b[i:]...)
		}},
	} {
		bad := c.edit(base)
		if utf8.Valid(bad) {
			t.Fatalf("%s: the edit left valid UTF-8", c.name)
		}
		if _, err := d.Build(bad, discard{}); !errors.Is(err, tree.ErrSyntax) || !strings.Contains(err.Error(), "not UTF-8") {
			t.Errorf("%s: %v; want ErrSyntax saying not UTF-8", c.name, err)
		}
		if r, ok := d.Root(); !ok || !r.Equal(root) || !bytes.Equal(d.Text(), base) {
			t.Errorf("%s: the Doc changed after a refused build", c.name)
		}
	}
	next := append(bytes.Clone(base[:len(base)-2]), `ü"}`...)
	got, err := d.Build(next, discard{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := tree.BuildJSON(next, discard{})
	if err != nil || !got.Equal(want) {
		t.Fatalf("valid build after refusals: %v, %v; want BuildJSON's root", got, err)
	}
}

// Build's verdict on random edits of a valid document is utf8.Valid's.
func TestDocBuildUTF8MatchesValid(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	base := utf8Doc(40)
	junk := [][]byte{{0xff}, {0x80}, {0xc3}, {0xe2, 0x82}, {0xf0, 0x9d, 0x84}, []byte("é"), []byte("𝄞"), []byte("a")}
	var starts []int // where each "text" value's characters start
	for i := 0; ; {
		k := bytes.Index(base[i:], []byte(`"text":"`))
		if k < 0 {
			break
		}
		i += k + len(`"text":"`)
		starts = append(starts, i)
	}
	for i := 0; i < 3000; i++ {
		d := tree.NewDoc()
		if _, err := d.Build(base, discard{}); err != nil {
			t.Fatal(err)
		}
		d.Commit()
		// Replace a few bytes inside a string value, keeping the JSON
		// syntax: only UTF-8 can go wrong.
		v := starts[rng.IntN(len(starts))]
		end := v + bytes.IndexByte(base[v:], '"')
		at := v + rng.IntN(end-v+1)
		cut := min(rng.IntN(4), end-at)
		next := append(append(append([]byte{}, base[:at]...), junk[rng.IntN(len(junk))]...), base[at+cut:]...)
		_, err := d.Build(next, discard{})
		if valid := utf8.Valid(next); valid != (err == nil) {
			t.Fatalf("edit %d: utf8.Valid %v, Build error %v\n%q", i, valid, err, next)
		}
	}
}

// BuildStored does not check a stored first version, so a document
// stored before the check stays usable; a later Build checks its change.
func TestDocBuildStoredTakesOldDocuments(t *testing.T) {
	old := []byte(`{"a":"x` + "\xff" + `y","b":1}`)
	d := tree.NewDoc()
	if _, err := d.BuildStored(old, discard{}); err != nil {
		t.Fatalf("stored document: %v", err)
	}
	d.Commit()
	if _, err := d.Build([]byte(`{"a":"x`+"\xff"+`y","b":2}`), discard{}); err != nil {
		t.Errorf("a valid change beside old invalid bytes: %v", err)
	}
	d.Commit()
	if _, err := d.Build([]byte(`{"a":"x`+"\xff"+`y","b":"`+"\xfe"+`"}`), discard{}); !errors.Is(err, tree.ErrSyntax) {
		t.Errorf("an invalid change: %v, want ErrSyntax", err)
	}
}
