package manifest

import (
	"testing"
	"time"

	"github.com/cairnlog/cairn/manifest/tree"
)

// TestDecodeKeepsNoAliasOfItsInput: a walk down a long history (export,
// du, replay) holds the manifests it read, and a record or inline state
// that aliased the bytes it was decoded from pinned the whole step
// object, blobs and merged packs included (110 MB of an export of a
// 100,000-step session). A decoded manifest must not change when the
// bytes it came from do.
func TestDecodeKeepsNoAliasOfItsInput(t *testing.T) {
	m := &Manifest{Session: "s", Number: 2, Parent: &Pointer{Session: "s", Number: 1}, Time: time.Unix(1, 2).UTC(),
		Kind: StateJSON, Record: []byte(`{"messages":[]}`), Root: tree.Ref{Kind: tree.Inline, Data: []byte(`{"a":1}`)}}
	enc := m.Encode()
	got, err := Decode(enc, "m")
	if err != nil {
		t.Fatal(err)
	}
	for i := range enc {
		enc[i] = 'X'
	}
	if want := `{"messages":[]}`; string(got.Record) != want {
		t.Errorf("record after its input was overwritten = %q, want %q", got.Record, want)
	}
	if want := `{"a":1}`; string(got.Root.Data) != want {
		t.Errorf("inline root after its input was overwritten = %q, want %q", got.Root.Data, want)
	}
}
