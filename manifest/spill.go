package manifest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/chunker"
	"github.com/cairnlog/cairn/cas/pack"
)

// Spilling: how a commit of a large state stays within bounded memory.
//
// The chunks of large files (tree.ChunkSink) collect in a pack of their
// own. Once it holds SpillThreshold stored bytes (or maxSpillBlobs
// blobs) it is built and written as a spill pack, with a conditional
// create, by one of spillWriters background writers while the build
// goes on; the build waits while they are all busy. Whatever has not
// spilled when the build ends, and every tree node and small blob,
// goes into the step object as before, so a step below the threshold
// is still exactly one PUT. The spill packs are written before the step
// object that names them (I2): a crash leaves them as orphans, kept by
// gc while their step's slot is empty and then deleted, exactly like a
// compaction's pack (see listing.packInFlight).

// SpillThreshold is the stored size at which a commit's new file chunks
// go to a spill pack instead of its step object.
const SpillThreshold = 16 << 20

// maxSpillBlobs bounds the blobs of one spill pack, so that its index
// (about 40 bytes a blob) fits in spillHeaderPrefix.
const maxSpillBlobs = 4096

// spillRoom is the room for a spill pack's header kept at the front of
// its buffer, and spillBufSize the size the buffer grows to: the
// header, the threshold and the last chunk (a chunk of chunker.Default
// stores in at most its size and a codec byte), then the trailer. A
// commit's first buffer starts at spillRoom+firstSpillBuf, so that a
// commit with a few chunks does not allocate (and zero) 16 MiB.
var (
	spillRoom    = pack.HeaderRoom(maxSpillBlobs)
	spillBufSize = spillRoom + SpillThreshold + chunker.Default.Max + 1 + cas.IDSize
)

const firstSpillBuf = 1 << 20

// spillWriters is how many spill packs are written at once: a store's
// PUT of a pack ends with an fsync (or a network round trip) that
// takes long next to the build, so a few overlap. With the pack being
// filled, at most spillWriters+1 packs are in memory.
const spillWriters = 3

// spiller is the sink of one commit: tree nodes and small blobs go to the
// step object's builder, file chunks to spill packs or, at the end, the
// step object too.
type spiller struct {
	// ctx is the commit's: once it is done, the build stops at its
	// next node (Put) rather than reading the rest of the state first.
	ctx  context.Context
	r    *Repo
	ix   *Index
	step *pack.Builder // the step object's new blobs
	// taken holds every file chunk of this commit: spilled, being
	// spilled or pending.
	taken map[cas.ID]bool
	// pending are the file chunks not yet spilled, in order; buf holds
	// their stored forms back to back after spillRoom bytes, so that
	// their pack is built around them without another copy
	// (pack.BuildInPlace).
	pending []pendingChunk
	buf     []byte
	// free holds the buffers of spill packs written, for reuse: a fresh
	// 16 MiB buffer costs its zeroing and page faults.
	free    chan []byte
	session string
	number  uint64

	queue      chan spillPack // built spill packs, to the writers
	closeQueue sync.Once
	done       chan struct{} // closed when every writer has returned
	failed     chan struct{} // closed on the first error
	mu         sync.Mutex
	next       uint64 // the last pack number handed out
	refs       []SpillRef
	written    []spillWritten
	err        error
}

// spillPack is a spill pack to build and write, and the number it is
// to be written as. It is built by its writer, not by the commit's
// build: hashing 16 MiB for the trailer would stall the build's
// assembler while the workers ran out of chunks.
type spillPack struct {
	k      uint64
	chunks []pendingChunk
	buf    []byte // the chunks' stored forms after spillRoom, for free once written
}

// pendingChunk is a file chunk in a spiller's buffer: its stored form
// is the next size bytes.
type pendingChunk struct {
	id   cas.ID
	raw  int64
	size int
}

// addChunks adds chunks, whose stored forms are buf[spillRoom:], to b.
func addChunks(b *pack.Builder, chunks []pendingChunk, buf []byte) {
	off := spillRoom
	for _, c := range chunks {
		b.AddStored(c.id, c.raw, buf[off:off+c.size:off+c.size])
		off += c.size
	}
}

// build returns the bytes of p.
func (p *spillPack) build() []byte {
	var b pack.Builder
	addChunks(&b, p.chunks, p.buf)
	data, _ := b.BuildInPlace(p.buf, spillRoom)
	return data
}

type spillWritten struct {
	key     string
	entries []pack.Entry
}

func (r *Repo) newSpiller(ctx context.Context, session string, n uint64, ix *Index, step *pack.Builder) *spiller {
	s := &spiller{ctx: ctx, r: r, ix: ix, step: step, taken: map[cas.ID]bool{}, session: session, number: n,
		queue: make(chan spillPack), free: make(chan []byte, spillWriters+1), done: make(chan struct{}), failed: make(chan struct{})}
	var wg sync.WaitGroup
	for range spillWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.writer(ctx)
		}()
	}
	go func() {
		wg.Wait()
		close(s.done)
	}()
	return s
}

// alloc hands out the next pack number: in build order, so that the
// same state is written to the same keys, unless a key was taken.
func (s *spiller) alloc() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	return s.next
}

func (s *spiller) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
		close(s.failed)
	}
}

// has reports whether this commit or its parent's layout already holds id.
func (s *spiller) has(id cas.ID) bool {
	return s.ix.Has(id) || s.step.Has(id) || s.taken[id]
}

// Put implements tree.Sink: a node or small blob, for the step object.
// It fails once the commit's context is done, which stops the build: a
// commit of a large directory cancelled while it read the files read
// them all before it noticed, at its first put.
func (s *spiller) Put(id cas.ID, raw []byte) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if !s.has(id) {
		s.step.Add(id, raw)
	}
	return nil
}

// EncodeChunk implements tree.ChunkSink; it runs on the build's workers.
func (s *spiller) EncodeChunk(id cas.ID, raw, dst []byte) []byte {
	if s.ix.Has(id) {
		return nil
	}
	return pack.EncodeBlob(dst, raw)
}

// PutChunk implements tree.ChunkSink. The stored form is copied into
// the buffer of the pack being filled, the one copy it takes on its
// way to the store (but for the first pack's, moved as it grows).
func (s *spiller) PutChunk(id cas.ID, raw, stored []byte) error {
	if s.has(id) {
		return nil
	}
	if stored == nil {
		stored = pack.EncodeBlob(nil, raw)
	}
	s.reserve(len(stored))
	s.buf = append(s.buf, stored...)
	s.pending = append(s.pending, pendingChunk{id: id, raw: int64(len(raw)), size: len(stored)})
	s.taken[id] = true
	if len(s.buf)-spillRoom < SpillThreshold && len(s.pending) < maxSpillBlobs {
		return nil
	}
	p := spillPack{k: s.alloc(), chunks: s.pending, buf: s.buf}
	s.pending, s.buf = nil, nil
	select {
	case s.queue <- p:
		return nil
	case <-s.failed:
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.err
	}
}

// reserve makes room in buf for n more bytes and the trailer: a buffer
// a written pack left, a small first one, or, when that is full, one
// of spillBufSize (or what n needs) with its bytes moved. Growing in
// one step leaves 1 MiB of garbage, not the 16 MiB of doubling.
func (s *spiller) reserve(n int) {
	if s.buf == nil {
		select {
		case s.buf = <-s.free:
		default:
			s.buf = make([]byte, spillRoom, spillRoom+firstSpillBuf)
		}
	}
	need := len(s.buf) + n + cas.IDSize
	if need <= cap(s.buf) {
		return
	}
	buf := make([]byte, len(s.buf), max(spillBufSize, need))
	copy(buf, s.buf)
	s.buf = buf
}

// recycle keeps buf, a spill pack's buffer no longer in use, for the
// next pack, unless enough are kept already.
func (s *spiller) recycle(buf []byte) {
	if buf == nil {
		return
	}
	select {
	case s.free <- buf[:spillRoom]:
	default:
	}
}

// writer builds and writes spill packs until the queue closes or a
// write fails. A taken key (a crashed or racing commit of the same step
// wrote it) is never overwritten: the pack goes to a fresh number, and
// the layout names exactly the keys this commit created.
func (s *spiller) writer(ctx context.Context) {
	for p := range s.queue {
		// Only a pack written is known to be done with: a store whose
		// Put failed might, for all this knows, still read its bytes.
		if s.write(ctx, p) {
			s.recycle(p.buf)
		}
	}
}

// write writes one spill pack, unless the commit failed already, and
// reports whether it did.
func (s *spiller) write(ctx context.Context, p spillPack) bool {
	select {
	case <-s.failed:
		return false // drain: the commit fails anyway
	default:
	}
	data := p.build()
	for k := p.k; ; k = s.alloc() {
		if k > MaxSpills {
			s.fail(fmt.Errorf("write spill pack of %s@%d: more than %d packs", s.session, s.number, MaxSpills))
			return false
		}
		key := SpillKey(s.session, s.number, k)
		err := s.r.store.Put(ctx, key, data, cas.PutOptions{IfAbsent: true})
		if errors.Is(err, cas.ErrExists) {
			continue
		}
		if err != nil {
			s.fail(fmt.Errorf("write %s: %w", DescribeKey(key), err))
			return false
		}
		// Parsed from the bytes just written: the index the
		// writer adds once the step is acknowledged.
		obj, err := pack.ParseHeader(data, DescribeKey(key))
		if err != nil {
			s.fail(fmt.Errorf("write %s: %w", DescribeKey(key), err))
			return false
		}
		s.mu.Lock()
		s.written = append(s.written, spillWritten{key: key, entries: obj.Entries})
		s.refs = append(s.refs, SpillRef{Session: s.session, Number: s.number, First: k, Last: k})
		s.mu.Unlock()
		return true
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
	addChunks(s.step, s.pending, s.buf)
	s.pending, s.buf = nil, nil
	// Written in any order: name them by number, runs merged.
	sort.Slice(s.refs, func(i, j int) bool { return s.refs[i].First < s.refs[j].First })
	var refs []SpillRef
	for _, r := range s.refs {
		if n := len(refs); n > 0 && refs[n-1].Last+1 == r.First {
			refs[n-1].Last = r.Last
			continue
		}
		refs = append(refs, r)
	}
	return refs, nil
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
