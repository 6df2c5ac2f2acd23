package tree

import (
	"errors"
	"io"
	"sync"

	"github.com/cairnlog/cairn/cas"
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

// ChunkSink is a Sink that takes the chunks of large files in the form
// it stores them, so that a build can hash and encode (compress) chunks
// on several goroutines and still hand them over in order. A build
// through a ChunkSink stores exactly what it would through Put: the same
// ids in the same order, whatever the number of workers.
type ChunkSink interface {
	Sink
	// EncodeChunk appends the stored form of the chunk id with bytes raw
	// to dst and returns the result, or returns nil if the sink has no
	// use for it (it already holds id). It is called from several
	// goroutines at once, in no particular order.
	EncodeChunk(id cas.ID, raw, dst []byte) []byte
	// PutChunk stores a chunk as Put does, in order; stored is what
	// EncodeChunk returned for it (nil: the sink encodes it if it must).
	// The sink must keep neither raw nor stored: the build reuses both.
	PutChunk(id cas.ID, raw, stored []byte) error
}

// streamJob is one chunk in flight from the chunker to the assembler.
type streamJob struct {
	data   *[]byte // from chunkBufs
	stored *[]byte // from storedBufs, for a ChunkSink
	id     cas.ID
	done   chan struct{} // closed by the worker
}

// chunkBufs recycles chunk buffers (at most chunker.Default.Max bytes)
// between the chunker and a ChunkSink, which does not keep them;
// storedBufs does the same for their stored forms.
var (
	chunkBufs  = sync.Pool{New: func() any { b := make([]byte, 0, chunker.Default.Max); return &b }}
	storedBufs = sync.Pool{New: func() any { b := make([]byte, 0, chunker.Default.Max+64); return &b }}
)

// Chunks in flight in putStream, for each worker and in all. The
// assembler stalls now and then (a ChunkSink building a 16 MiB pack, a
// PUT it waits for, a turn of a busy machine's scheduler); chunks
// queued behind it keep the workers busy meanwhile. At most maxInFlight
// chunk buffers and as many stored forms are held (16 MiB at the most
// with chunker.Default), whatever the number of cores.
const (
	inFlightPerWorker = 64
	maxInFlight       = 128
)

// putStream stores the content of r like putChunks without holding all
// of it in memory; small content becomes a single blob or inline ref.
// The chunker runs on its own goroutine, workers goroutines hash the
// chunks (and encode them, for a ChunkSink), and the calling goroutine
// hands them to sink in stream order; at most the window (and the two
// chunks at either end of it) are in flight. workers < 1 means one.
func putStream(sink Sink, r io.Reader, workers int) (Ref, int64, error) {
	workers = max(workers, 1)
	cs, _ := sink.(ChunkSink)
	window := min(inFlightPerWorker*workers, maxInFlight)
	// The chunker queues a chunk for the workers before it queues it
	// for the assembler, so both queues take the whole window: the
	// assembler's never makes the chunker wait while workers are idle.
	jobs := make(chan *streamJob, window)
	order := make(chan *streamJob, window)
	stop := make(chan struct{})
	var readErr error
	go func() {
		defer close(order)
		defer close(jobs)
		cr := chunker.Default.NewReader(r)
		for {
			c, err := cr.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				readErr = err // read by the assembler after order closes
				return
			}
			bp := chunkBufs.Get().(*[]byte)
			*bp = append((*bp)[:0], c...)
			j := &streamJob{data: bp, done: make(chan struct{})}
			select {
			case jobs <- j:
			case <-stop:
				return
			}
			select {
			case order <- j:
			case <-stop:
				return
			}
		}
	}()
	for range workers {
		go func() {
			for j := range jobs {
				if data := *j.data; len(data) > InlineMax {
					j.id = cas.Sum(data)
					if cs != nil {
						sp := storedBufs.Get().(*[]byte)
						if stored := cs.EncodeChunk(j.id, data, (*sp)[:0]); stored != nil {
							*sp = stored
							j.stored = sp
						} else {
							storedBufs.Put(sp)
						}
					}
				}
				close(j.done)
			}
		}()
	}
	var refs []Ref
	var sizes []int64
	var total int64
	var err error
	for j := range order {
		<-j.done
		data := *j.data
		if err == nil {
			var ref Ref
			ref, err = chunkRef(sink, cs, j)
			refs, sizes = append(refs, ref), append(sizes, int64(len(data)))
			total += int64(len(data))
			if err != nil {
				close(stop)
			}
		}
		if cs != nil {
			// A ChunkSink keeps no raw bytes; another Sink may.
			chunkBufs.Put(j.data)
		}
		if j.stored != nil {
			storedBufs.Put(j.stored)
		}
	}
	if err != nil {
		return Ref{}, 0, err
	}
	if readErr != nil {
		return Ref{}, 0, readErr
	}
	switch len(refs) {
	case 0:
		ref, err := leafRef(sink, nil)
		return ref, 0, err
	case 1:
		// One chunk: a plain leaf, the common case for small files.
		return refs[0], total, nil
	}
	ref, err := putList(sink, TypeChunks, refs, sizes)
	return ref, total, err
}

// chunkRef stores one hashed chunk as leafRef would.
func chunkRef(sink Sink, cs ChunkSink, j *streamJob) (Ref, error) {
	data := *j.data
	if len(data) <= InlineMax {
		return Ref{Kind: Inline, Data: append([]byte(nil), data...)}, nil
	}
	var err error
	if cs != nil {
		var stored []byte
		if j.stored != nil {
			stored = *j.stored
		}
		err = cs.PutChunk(j.id, data, stored)
	} else {
		err = sink.Put(j.id, data)
	}
	if err != nil {
		return Ref{}, err
	}
	return Ref{Kind: Blob, ID: j.id, Size: int64(len(data))}, nil
}
