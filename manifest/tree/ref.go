// Package tree stores an agent's state as a Merkle tree of content-
// addressed nodes, git-style: an unchanged subtree costs nothing and a
// changed leaf costs O(depth).
//
// Two kinds of state share one node format:
//
//   - JSON documents are stored structurally: a large object becomes an
//     object node of key → child, a large array a content-defined list of
//     element refs, small values stay inline in their parent, and small
//     containers are one blob of their compact text. Keys keep their
//     order and every scalar keeps its exact token text, so a document
//     reads back byte for byte in compact form.
//   - Directories become directory nodes of name → file, symlink or
//     subdirectory; large files are split by the content-defined chunker.
//
// Long lists (array elements, file chunks) are split into leaves at
// content-defined boundaries (prolly-tree style) and joined by list
// nodes, so appending to a long list rewrites only its last leaf and the
// path above it.
package tree

import (
	"encoding/binary"
	"fmt"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/internal/wire"
)

// RefKind says how a Ref holds its content.
type RefKind uint8

// Ref kinds.
const (
	Inline RefKind = 0 // the bytes are in the ref itself
	Blob   RefKind = 1 // a blob of raw bytes, by id
	Node   RefKind = 2 // a tree node, by id
)

// InlineMax is the largest value kept inline in its parent node.
const InlineMax = 32

// Ref points at a piece of content: inline bytes, a raw blob, or a node.
type Ref struct {
	Kind RefKind
	ID   cas.ID // Blob, Node
	// Size is the raw size of a Blob, the element count of an array or
	// list node, or the byte count of a chunked-bytes node.
	Size int64
	Data []byte // Inline
}

// Equal reports whether r and o name the same content.
func (r Ref) Equal(o Ref) bool {
	if r.Kind != o.Kind {
		return false
	}
	if r.Kind == Inline {
		return string(r.Data) == string(o.Data)
	}
	return r.ID == o.ID
}

// AppendRef appends the encoding of r to dst.
func AppendRef(dst []byte, r Ref) []byte {
	dst = append(dst, byte(r.Kind))
	switch r.Kind {
	case Inline:
		dst = binary.AppendUvarint(dst, uint64(len(r.Data)))
		return append(dst, r.Data...)
	default:
		dst = append(dst, r.ID[:]...)
		return binary.AppendUvarint(dst, uint64(r.Size))
	}
}

// reader decodes node bytes, remembering the first error.
type reader struct{ wire.Reader }

// newReader returns a reader of p whose faults are ErrCorrupt naming what.
func newReader(p []byte, what string) *reader {
	return &reader{wire.Reader{P: p, Fault: func(msg string) error {
		return fmt.Errorf("%w: %s: %s", cas.ErrCorrupt, what, msg)
	}}}
}

// maxSize bounds any size field read from a node.
const maxSize = 1 << 50

// ReadRef decodes a ref from the front of p and returns the rest.
func ReadRef(p []byte, what string) (Ref, []byte, error) {
	// A well-formed blob or node ref, the common case (a stat cache holds
	// thousands), is read without a reader: no allocation. Anything else,
	// including every fault, takes the reader's path and its errors.
	if len(p) > 1+cas.IDSize && (RefKind(p[0]) == Blob || RefKind(p[0]) == Node) {
		if v, n := binary.Uvarint(p[1+cas.IDSize:]); n > 0 && v <= maxSize {
			ref := Ref{Kind: RefKind(p[0]), Size: int64(v)}
			copy(ref.ID[:], p[1:1+cas.IDSize])
			return ref, p[1+cas.IDSize+n:], nil
		}
	}
	r := newReader(p, what)
	ref := r.ref()
	return ref, r.P, r.Err
}

func (r *reader) ref() Ref {
	var ref Ref
	ref.Kind = RefKind(r.Byte())
	switch ref.Kind {
	case Inline:
		ref.Data = r.Take(r.Uvarint(InlineMax))
	case Blob, Node:
		copy(ref.ID[:], r.Take(cas.IDSize))
		ref.Size = int64(r.Uvarint(maxSize))
	default:
		r.Fail("unknown ref kind %d", ref.Kind)
	}
	return ref
}
