package manifest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
)

// Spilling: how a commit of a large state stays within bounded memory.
//
// The chunks of large files (tree.ChunkSink) collect in a pack of their
// own. Once it holds SpillThreshold stored bytes (or maxSpillBlobs
// blobs) it is written as a spill pack, with a conditional create, by one
// background writer while the build goes on; at most spillQueue packs
// wait for it. Whatever has not spilled when the build ends, and every
// tree node and small blob, goes into the step object as before, so a
// step below the threshold is still exactly one PUT. The spill packs are
// written before the step object that names them (I2): a crash leaves
// them as orphans, kept by gc while their step's slot is empty and then
// deleted, exactly like a compaction's pack (see listing.packInFlight).

// SpillThreshold is the stored size at which a commit's new file chunks
// go to a spill pack instead of its step object.
const SpillThreshold = 16 << 20

// maxSpillBlobs bounds the blobs of one spill pack, so that its index
// (about 40 bytes a blob) fits in spillHeaderPrefix.
const maxSpillBlobs = 4096

// spillQueue is how many built spill packs may wait for the writer.
const spillQueue = 1

// spiller is the sink of one commit: tree nodes and small blobs go to the
// step object's builder, file chunks to spill packs or, at the end, the
// step object too.
type spiller struct {
	r       *Repo
	ix      *Index
	step    *pack.Builder // the step object's new blobs
	chunks  pack.Builder  // file chunks not yet spilled
	spilled map[cas.ID]bool
	session string
	number  uint64

	queue      chan []byte // built spill packs, to the writer
	closeQueue sync.Once
	done       chan struct{}
	// Written by the writer; read after done is closed.
	refs    []SpillRef
	written []spillWritten
	err     error
}

type spillWritten struct {
	key     string
	entries []pack.Entry
}

func (r *Repo) newSpiller(ctx context.Context, session string, n uint64, ix *Index, step *pack.Builder) *spiller {
	s := &spiller{r: r, ix: ix, step: step, spilled: map[cas.ID]bool{}, session: session, number: n,
		queue: make(chan []byte, spillQueue), done: make(chan struct{})}
	go s.writer(ctx)
	return s
}

// has reports whether this commit or its parent's layout already holds id.
func (s *spiller) has(id cas.ID) bool {
	return s.ix.Has(id) || s.step.Has(id) || s.chunks.Has(id) || s.spilled[id]
}

// Put implements tree.Sink: a node or small blob, for the step object.
func (s *spiller) Put(id cas.ID, raw []byte) error {
	if !s.has(id) {
		s.step.Add(id, raw)
	}
	return nil
}

// EncodeChunk implements tree.ChunkSink; it runs on the build's workers.
func (s *spiller) EncodeChunk(id cas.ID, raw []byte) []byte {
	if s.ix.Has(id) {
		return nil
	}
	return pack.EncodeBlob(nil, raw)
}

// PutChunk implements tree.ChunkSink.
func (s *spiller) PutChunk(id cas.ID, raw, stored []byte) error {
	if s.has(id) {
		return nil
	}
	if stored == nil {
		stored = pack.EncodeBlob(nil, raw)
	}
	s.chunks.AddStored(id, int64(len(raw)), stored)
	if s.chunks.Size() < SpillThreshold && s.chunks.Len() < maxSpillBlobs {
		return nil
	}
	data, entries := s.chunks.Build(pack.KindPack, nil)
	for _, e := range entries {
		s.spilled[e.ID] = true
	}
	s.chunks = pack.Builder{}
	select {
	case s.queue <- data:
		return nil
	case <-s.done:
		return s.err // the writer failed
	}
}

// writer writes the spill packs in order. A taken key (a crashed or
// racing commit of the same step wrote it) is never overwritten: the
// pack goes to the next free number, and the layout names exactly the
// keys this commit created.
func (s *spiller) writer(ctx context.Context) {
	defer close(s.done)
	k := uint64(0)
	for data := range s.queue {
		for {
			if k++; k > MaxSpills {
				s.err = fmt.Errorf("write spill pack of %s@%d: all %d keys taken", s.session, s.number, MaxSpills)
				return
			}
			key := SpillKey(s.session, s.number, k)
			err := s.r.store.Put(ctx, key, data, cas.PutOptions{IfAbsent: true})
			if errors.Is(err, cas.ErrExists) {
				continue
			}
			if err != nil {
				s.err = fmt.Errorf("write %s: %w", key, err)
				return
			}
			// Parsed from the bytes just written: the index the
			// writer adds once the step is acknowledged.
			obj, err := pack.ParseHeader(data, key)
			if err != nil {
				s.err = fmt.Errorf("write %s: %w", key, err)
				return
			}
			s.written = append(s.written, spillWritten{key: key, entries: obj.Entries})
			if n := len(s.refs); n > 0 && s.refs[n-1].Last+1 == k {
				s.refs[n-1].Last = k
			} else {
				s.refs = append(s.refs, SpillRef{Session: s.session, Number: s.number, First: k, Last: k})
			}
			break
		}
	}
}

// finish waits for the spill packs to be written and moves the chunks
// that did not spill into the step object. It returns the spill packs
// written, to be named in the step's layout.
func (s *spiller) finish() ([]SpillRef, error) {
	s.closeQueue.Do(func() { close(s.queue) })
	<-s.done
	if s.err != nil {
		return nil, s.err
	}
	s.step.Merge(&s.chunks)
	s.chunks = pack.Builder{}
	return s.refs, nil
}

// abort stops the writer of a commit that failed before finish; the
// packs it wrote are orphans for gc.
func (s *spiller) abort() {
	select {
	case <-s.done:
		return
	default:
	}
	s.closeQueue.Do(func() { close(s.queue) })
	<-s.done
}
