package tree

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/cairnlog/cairn/cas"
)

// TestReadRefFastPath: ReadRef reads blob and node refs without a
// reader exactly as the reader does, and leaves faults to it.
func TestReadRefFastPath(t *testing.T) {
	id := cas.Sum([]byte("x"))
	for _, ref := range []Ref{
		{Kind: Blob, ID: id, Size: 0}, {Kind: Node, ID: id, Size: 300}, {Kind: Blob, ID: id, Size: maxSize},
		{Kind: Inline, Data: []byte("abc")},
	} {
		enc := append(AppendRef(nil, ref), 9, 9)
		got, rest, err := ReadRef(enc, "test")
		if err != nil || !got.Equal(ref) || got.Size != ref.Size || string(rest) != "\x09\x09" {
			t.Errorf("ReadRef(%v) = %v, %q, %v", ref, got, rest, err)
		}
		r := newReader(enc, "test")
		if slow := r.ref(); !slow.Equal(got) || slow.Size != got.Size || len(r.P) != len(rest) {
			t.Errorf("reader gives %v, fast path %v", slow, got)
		}
	}
	big := AppendRef(nil, Ref{Kind: Blob, ID: id, Size: maxSize})
	big = append(big[:1+cas.IDSize], binary.AppendUvarint(nil, maxSize+1)...)
	for _, bad := range [][]byte{nil, {byte(Blob)}, append([]byte{byte(Node)}, id[:]...), big, {7}} {
		if _, _, err := ReadRef(bad, "test"); !errors.Is(err, cas.ErrCorrupt) {
			t.Errorf("ReadRef(%x): %v, want ErrCorrupt", bad, err)
		}
	}
}
