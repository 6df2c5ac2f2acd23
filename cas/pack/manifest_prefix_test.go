package pack_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
)

// TestParseManifest: ManifestPrefix bytes of a step object are enough to
// read its manifest back exactly, whatever the manifest's length; fewer
// are ErrShort, and a pack or damaged magic is corrupt, never a manifest.
func TestParseManifest(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 300, 20000} {
		m := []byte(strings.Repeat("m", n))
		var b pack.Builder
		raw := []byte("a blob after the manifest")
		b.Add(cas.Sum(raw), raw)
		obj, _ := b.Build(pack.KindStep, m)
		p := pack.ManifestPrefix(n)
		got, err := pack.ParseManifest(obj[:p], "obj")
		if err != nil || !bytes.Equal(got, m) {
			t.Fatalf("manifest of %d bytes from its prefix: %d bytes, %v", n, len(got), err)
		}
		if _, err := pack.ParseManifest(obj[:p-1], "obj"); !errors.Is(err, pack.ErrShort) {
			t.Errorf("manifest of %d bytes from one byte less: %v, want ErrShort", n, err)
		}
	}
	var b pack.Builder
	packed, _ := b.Build(pack.KindPack, nil)
	if _, err := pack.ParseManifest(packed, "pack"); !errors.Is(err, cas.ErrCorrupt) {
		t.Errorf("manifest of a pack: %v, want ErrCorrupt", err)
	}
	obj, _ := b.Build(pack.KindStep, []byte("m"))
	obj[0] ^= 1
	if _, err := pack.ParseManifest(obj, "obj"); !errors.Is(err, cas.ErrCorrupt) {
		t.Errorf("manifest of a damaged object: %v, want ErrCorrupt", err)
	}
}
