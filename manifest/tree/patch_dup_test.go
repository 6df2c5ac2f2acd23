package tree_test

import (
	"testing"

	"github.com/cairnlog/cairn/manifest/tree"
)

// TestPatchRemoveMemberNamedTwice: a state may name a member twice, and
// a pointer reads the last one. Removing it used to remove only that
// one, so the earlier member showed through: "remove /a" left "a":1.
func TestPatchRemoveMemberNamedTwice(t *testing.T) {
	for _, tc := range []struct{ doc, ops, want string }{
		{`{"a":1,"b":0,"a":2}`, `[{"op":"remove","path":"/a"}]`, `{"b":0}`},
		{`{"a":1,"a":2,"a":3}`, `[{"op":"remove","path":"/a"}]`, `{}`},
		{`{"x":{"a":1,"\u0061":2},"y":0}`, `[{"op":"move","from":"/x/a","path":"/y"}]`, `{"x":{},"y":2}`},
		{`{"a":1,"b":0,"a":2}`, `[{"op":"replace","path":"/a","value":5}]`, `{"a":1,"b":0,"a":5}`},
	} {
		d := tree.NewDoc()
		if _, err := d.Build([]byte(tc.doc), discard{}); err != nil {
			t.Fatal(err)
		}
		d.Commit()
		if _, err := d.Patch([]byte(tc.ops), discard{}, 0); err != nil {
			t.Fatalf("%s on %s: %v", tc.ops, tc.doc, err)
		}
		if got := string(d.Text()); got != tc.want {
			t.Errorf("%s on %s = %s, want %s", tc.ops, tc.doc, got, tc.want)
		}
	}
}
