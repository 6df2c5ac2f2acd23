package tree

import (
	"encoding/binary"
	"fmt"

	"github.com/cairnlog/cairn/cas"
)

// Node types: the first byte of every node blob.
const (
	TypeObject byte = 'O' // JSON object: key → value
	TypeArray  byte = 'A' // leaf of a JSON array: values
	TypeChunks byte = 'C' // leaf of a chunked byte string: chunk blobs
	TypeList   byte = 'L' // interior of a long array or chunk list: child nodes
	TypeDir    byte = 'D' // directory: name → file, link or directory
)

// Modes of directory entries.
const (
	ModeFile    byte = 0
	ModeExec    byte = 1
	ModeSymlink byte = 2
	ModeDir     byte = 3
)

// Limits on decoded nodes, so hostile bytes cannot make a reader allocate
// without bound.
const (
	MaxNodeEntries = 1 << 20
	MaxNameLen     = 4096
)

// Entry is one entry of a node. Name is the raw JSON key token (object),
// the file name (directory) or empty (lists).
type Entry struct {
	Name string
	Mode byte // directory entries only
	Ref  Ref
}

// NodeData is a decoded node.
type NodeData struct {
	Type    byte
	Entries []Entry
}

// Encode returns the canonical bytes of n.
func (n *NodeData) Encode() []byte {
	out := []byte{n.Type}
	out = binary.AppendUvarint(out, uint64(len(n.Entries)))
	for _, e := range n.Entries {
		out = appendEntry(out, n.Type, e)
	}
	return out
}

// appendEntry appends the encoding of e, an entry of a node of type typ.
func appendEntry(out []byte, typ byte, e Entry) []byte {
	switch typ {
	case TypeObject:
		out = binary.AppendUvarint(out, uint64(len(e.Name)))
		out = append(out, e.Name...)
	case TypeDir:
		out = binary.AppendUvarint(out, uint64(len(e.Name)))
		out = append(out, e.Name...)
		out = append(out, e.Mode)
	}
	return AppendRef(out, e.Ref)
}

// DecodeNode decodes node bytes. what names the node in errors.
func DecodeNode(data []byte, what string) (*NodeData, error) {
	r := newReader(data, what)
	n := &NodeData{Type: r.Byte()}
	switch n.Type {
	case TypeObject, TypeArray, TypeChunks, TypeList, TypeDir:
	default:
		if r.Err == nil {
			r.Fail("unknown node type %q", n.Type)
		}
		return nil, r.Err
	}
	count := r.Uvarint(MaxNodeEntries)
	n.Entries = make([]Entry, 0, min(count, 1024))
	for i := uint64(0); i < count && r.Err == nil; i++ {
		var e Entry
		if n.Type == TypeObject || n.Type == TypeDir {
			e.Name = string(r.Take(r.Uvarint(MaxNameLen)))
		}
		if n.Type == TypeDir {
			e.Mode = r.Byte()
			if e.Mode > ModeDir {
				r.Fail("unknown mode %d", e.Mode)
			}
		}
		e.Ref = r.ref()
		if r.Err == nil {
			if err := n.checkRef(e); err != nil {
				r.Fail("%v", err)
			}
		}
		n.Entries = append(n.Entries, e)
	}
	if r.Err == nil && len(r.P) != 0 {
		r.Fail("%d trailing bytes", len(r.P))
	}
	if r.Err != nil {
		return nil, r.Err
	}
	return n, nil
}

// checkRef rejects refs that cannot appear in a node of this type.
func (n *NodeData) checkRef(e Entry) error {
	switch n.Type {
	case TypeList:
		if e.Ref.Kind != Node {
			return fmt.Errorf("list entry is not a node")
		}
	case TypeChunks:
		if e.Ref.Kind == Node {
			return fmt.Errorf("chunk entry is a node")
		}
	case TypeDir:
		if e.Mode == ModeDir && e.Ref.Kind != Node {
			return fmt.Errorf("directory %q is not a node", e.Name)
		}
		if e.Mode == ModeSymlink && e.Ref.Kind == Node {
			return fmt.Errorf("symlink %q is a node", e.Name)
		}
	}
	return nil
}

// Sink receives the blobs and nodes a builder produces. Put may be
// called with content the sink already has; it must deduplicate.
type Sink interface {
	Put(id cas.ID, raw []byte) error
}

// putNode encodes n, hands it to sink and returns its ref.
func putNode(sink Sink, n *NodeData, size int64) (Ref, error) {
	b := n.Encode()
	id := cas.Sum(b)
	if err := sink.Put(id, b); err != nil {
		return Ref{}, err
	}
	return Ref{Kind: Node, ID: id, Size: size}, nil
}

// leafRef returns an inline ref for small data, else puts data as a blob.
func leafRef(sink Sink, data []byte) (Ref, error) {
	if len(data) <= InlineMax {
		return Ref{Kind: Inline, Data: append([]byte(nil), data...)}, nil
	}
	id := cas.Sum(data)
	if err := sink.Put(id, data); err != nil {
		return Ref{}, err
	}
	return Ref{Kind: Blob, ID: id, Size: int64(len(data))}, nil
}

// List splitting: an entry ends a node when the node already has listMin
// entries and a hash of the entry's encoding hits 1 in listTail, or when
// the node reaches listMax entries. Nodes therefore hold about 7.5
// entries with little spread, which matters for appends: each append
// rewrites the open node at every level of the right spine, and a
// geometric (min-less) split made those open nodes twice as long on
// average. The boundaries stay content-defined, so an insertion or
// deletion in the middle re-synchronises within a node or two. The
// constants and the hash are part of the stored format.
const (
	listMin  = 6
	listTail = 2
	listMax  = 16
)

// boundary reports whether an entry with encoding enc, the count-th of
// its node, ends the node. The hash is FNV-1a 64 with a final avalanche:
// cheap and stable across processes.
func boundary(enc []byte, count int) bool {
	return listSplit.ends(enc, count)
}

// split is a rule for where a list's nodes end: an entry ends a node
// when the node already has min entries and a hash of the entry's key
// bytes hits 1 in tail, or when the node reaches max entries.
type split struct{ min, tail, max int }

// listSplit is the rule of JSON arrays, chunk lists and the list nodes
// above them (listMin, listTail, listMax).
var listSplit = split{listMin, listTail, listMax}

// Directories split by rules of their own (manifest version 3 reads any
// split; only which nodes dedup depends on the rule):
//
//   - dirLeafSplit ends a directory leaf as listSplit ends a list leaf,
//     but hashes only an entry's name and mode, not its ref: an edited
//     file changes its entry, never where leaves end, so an edit
//     rewrites one leaf. (Hashing the ref too moved a boundary on about
//     one edit in two, rewriting the next leaf as well.)
//   - dirListSplit ends the list nodes above the leaves. With
//     listSplit's minimum of 6, a directory of 50 files (7 leaves) had
//     two or three list nodes on two levels instead of one, each
//     rewritten by every change below it, with its ref and index entry.
//     A directory of up to 12 leaves (about 90 entries) now has one list
//     node; a larger one about 15 leaves a list node, so a change in a
//     directory of 10,000 entries still rewrites only four nodes.
var (
	dirLeafSplit = split{listMin, listTail, listMax}
	dirListSplit = split{min: 12, tail: 4, max: 48}
)

// ends reports whether an entry whose key bytes are key, the count-th of
// its node, ends the node.
func (s split) ends(key []byte, count int) bool {
	if count >= s.max {
		return true
	}
	if count < s.min {
		return false
	}
	h := uint64(14695981039346656037)
	for _, c := range key {
		h ^= uint64(c)
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h%uint64(s.tail) == 0
}

// putList stores refs as a list: one leaf node of leafType if it fits in
// one leaf, else leaves joined by list nodes, level by level. size is the
// element (or byte) count the list stands for.
func putList(sink Sink, leafType byte, refs []Ref, sizes []int64) (Ref, error) {
	entries := make([]Entry, len(refs))
	for i, r := range refs {
		entries[i].Ref = r
	}
	return putEntries(sink, leafType, entries, sizes)
}

// putDir stores the entries of a directory, sorted by name, as a list of
// directory leaves: one TypeDir node if they fit in one leaf (the only
// form before manifest version 3), else TypeDir leaves joined by list
// nodes, so that changing one entry of a large directory rewrites one
// leaf and the path above it instead of the whole listing. A directory
// ref's Size is its number of entries. Leaves and list nodes end by the
// rules dirLeafSplit and dirListSplit.
func putDir(sink Sink, entries []Entry) (Ref, error) {
	sizes := make([]int64, len(entries))
	for i := range sizes {
		sizes[i] = 1
	}
	return putEntries(sink, TypeDir, entries, sizes)
}

// putEntries stores entries as a list: leaves of leafType split at
// content-defined boundaries, joined by list nodes level by level. An
// entry's boundary hash covers its whole encoding, name and mode
// included, except in a directory leaf (see dirLeafSplit).
func putEntries(sink Sink, leafType byte, entries []Entry, sizes []int64) (Ref, error) {
	typ := leafType
	level := entries
	rule := listSplit
	if leafType == TypeDir {
		rule = dirLeafSplit
	}
	for {
		var next []Entry
		var nextSizes []int64
		start := 0
		var enc []byte
		flush := func(end int) error {
			node := &NodeData{Type: typ, Entries: make([]Entry, 0, end-start)}
			var total int64
			for i := start; i < end; i++ {
				node.Entries = append(node.Entries, level[i])
				total += sizes[i]
			}
			ref, err := putNode(sink, node, total)
			if err != nil {
				return err
			}
			next = append(next, Entry{Ref: ref})
			nextSizes = append(nextSizes, total)
			start = end
			return nil
		}
		for i := range level {
			if typ == TypeDir {
				enc = appendDirKey(enc[:0], level[i])
			} else {
				enc = appendEntry(enc[:0], typ, level[i])
			}
			if rule.ends(enc, i+1-start) {
				if i+1 == len(level) && start == 0 {
					break // the whole level fits in one node
				}
				if err := flush(i + 1); err != nil {
					return Ref{}, err
				}
			}
		}
		if start < len(level) || len(level) == 0 {
			if err := flush(len(level)); err != nil {
				return Ref{}, err
			}
		}
		if len(next) == 1 {
			return next[0].Ref, nil
		}
		if leafType == TypeDir {
			rule = dirListSplit
		}
		level, sizes, typ = next, nextSizes, TypeList
	}
}

// appendDirKey appends what dirLeafSplit hashes of a directory entry:
// its name and mode.
func appendDirKey(out []byte, e Entry) []byte {
	out = binary.AppendUvarint(out, uint64(len(e.Name)))
	out = append(out, e.Name...)
	return append(out, e.Mode)
}
