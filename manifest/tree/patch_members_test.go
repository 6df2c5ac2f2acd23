package tree_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/manifest/tree"
)

// TestPatchOpMembersExact: an operation's members are op, path, from and
// value, spelled so and each given once (RFC 6902 section 4: exactly one
// "op"; other members are ignored). encoding/json matched them in any
// case and took the last of two, so {"op":"test",...,"op":"remove"}
// removed what a reader of the first member took for a test, and
// {"OP":"add","PATH":"/d","VALUE":2} added /d.
func TestPatchOpMembersExact(t *testing.T) {
	doc := []byte(`{"a":1,"b":2}`)
	for _, c := range []struct{ ops, want string }{
		{`[{"op":"test","path":"/a","value":1,"op":"remove"}]`, `patch op 1: member "op" is given twice`},
		{`[{"op":"remove","path":"/a","path":"/b"}]`, `patch op 1: member "path" is given twice`},
		{`[{"op":"add","path":"/c","value":1,"value":2}]`, `patch op 1: member "value" is given twice`},
		{`[{"op":"copy","from":"/a","from":"/b","path":"/c"}]`, `patch op 1: member "from" is given twice`},
		{`[{"OP":"add","PATH":"/d","VALUE":2}]`, `patch op 1: missing path`},
		{`[{"op":"add","Path":"/d","value":2}]`, `patch op 1 (add ): missing path`},
		{`[{"op":"add","path":"/d","Value":2}]`, `patch op 1 (add /d): missing value`},
	} {
		d := tree.NewDoc()
		if _, err := d.Build(doc, discard{}); err != nil {
			t.Fatal(err)
		}
		d.Commit()
		_, err := d.Patch([]byte(c.ops), discard{}, 0)
		if err == nil || !errors.Is(err, tree.ErrPatch) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Patch %s = %v, want %q", c.ops, err, c.want)
		}
		if !bytes.Equal(d.Text(), doc) {
			t.Errorf("Patch %s changed the document to %s", c.ops, d.Text())
		}
	}
	// Other members are ignored, as the RFC has it.
	d := tree.NewDoc()
	if _, err := d.Build(doc, discard{}); err != nil {
		t.Fatal(err)
	}
	d.Commit()
	if _, err := d.Patch([]byte(`[{"op":"add","path":"/c","value":3,"note":"x","Op":"remove"},{"op":"add","path":"/n","value":null}]`), discard{}, 0); err != nil {
		t.Fatal(err)
	}
	if got := string(d.Text()); got != `{"a":1,"b":2,"c":3,"n":null}` {
		t.Errorf("patch with other members = %s", got)
	}
}
