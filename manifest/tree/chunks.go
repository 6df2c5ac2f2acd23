package tree

import (
	"errors"
	"io"

	"github.com/cairnlog/cairn/cas/chunker"
)

// putChunks stores data split at content-defined boundaries as a chunk
// list, so an edit inside a large value only changes nearby chunks.
func putChunks(sink Sink, data []byte) (Ref, error) {
	return putChunkList(sink, chunker.Default.Split(data))
}

// putChunksWith stores data split with params p: a plain leaf if it is
// one chunk (or none), else a chunk list.
func putChunksWith(sink Sink, p chunker.Params, data []byte) (Ref, error) {
	chunks := p.Split(data)
	if len(chunks) <= 1 {
		return leafRef(sink, data)
	}
	return putChunkList(sink, chunks)
}

func putChunkList(sink Sink, chunks [][]byte) (Ref, error) {
	refs := make([]Ref, len(chunks))
	sizes := make([]int64, len(chunks))
	for i, c := range chunks {
		ref, err := leafRef(sink, c)
		if err != nil {
			return Ref{}, err
		}
		refs[i], sizes[i] = ref, int64(len(c))
	}
	return putList(sink, TypeChunks, refs, sizes)
}

// putStream stores the content of r like putChunks without holding all
// of it in memory; small content becomes a single blob or inline ref.
func putStream(sink Sink, r io.Reader) (Ref, int64, error) {
	cr := chunker.Default.NewReader(r)
	var refs []Ref
	var sizes []int64
	var total int64
	var first []byte
	for {
		c, err := cr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Ref{}, 0, err
		}
		if len(refs) == 0 && first == nil {
			first = append([]byte{}, c...) // the reader reuses its buffer
			total += int64(len(c))
			continue
		}
		if first != nil {
			ref, err := leafRef(sink, first)
			if err != nil {
				return Ref{}, 0, err
			}
			refs, sizes, first = append(refs, ref), append(sizes, int64(len(first))), nil
		}
		ref, err := leafRef(sink, c)
		if err != nil {
			return Ref{}, 0, err
		}
		refs, sizes = append(refs, ref), append(sizes, int64(len(c)))
		total += int64(len(c))
	}
	if len(refs) == 0 {
		// Zero or one chunk: a plain leaf, the common case for small files.
		ref, err := leafRef(sink, first)
		return ref, total, err
	}
	ref, err := putList(sink, TypeChunks, refs, sizes)
	return ref, total, err
}
