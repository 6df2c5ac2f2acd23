package pack

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"

	"github.com/cairnlog/cairn/cas"
	"github.com/klauspost/compress/zstd"
)

// Codec bytes: the first byte of every stored blob says how the rest is
// encoded, so every blob is self-describing.
const (
	CodecRaw  byte = 0 // the raw bytes follow
	CodecZstd byte = 1 // a zstd frame of the raw bytes follows
)

// MaxBlobSize bounds the uncompressed size of one blob. Large entries are
// chunked well below it; anything bigger read from a store is corrupt or
// hostile, and decoding it would be a decompression bomb.
const MaxBlobSize = 64 << 20

// minCompress is the size below which compression is not attempted.
const minCompress = 64

var (
	// streamDecoders are reused for bounded, streaming decodes.
	streamDecoders = sync.Pool{New: func() any {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxMemory(MaxBlobSize), zstd.WithDecoderMaxWindow(maxWindow))
		if err != nil {
			panic(err)
		}
		return d
	}}
)

// encoderPool holds zstd encoders of one set of options for EncodeBlob,
// each used by one goroutine at a time. A goroutine gets the encoder
// last put back on its own P (a sync.Pool), whose tables are still in
// that core's cache: the zstd package's own encoder hands its per-core
// slots out in turn, and on 16 KiB chunks the cache misses cost a large
// commit about a tenth of its CPU time. The pool drops what sat idle
// through two garbage collections; making an encoder costs ~0.3 ms and
// 600 KB, so a dropped one is not lost but kept in spare (by a cleanup
// on its handle, up to GOMAXPROCS of them) for the next that is needed.
type encoderPool struct {
	opts  []zstd.EOption
	pool  sync.Pool // of *encHandle
	mu    sync.Mutex
	spare []*zstd.Encoder
}

// encoderSlots holds a token for each encoder in use, of either pool:
// at most GOMAXPROCS at once.
var encoderSlots = make(chan struct{}, runtime.GOMAXPROCS(0))

// encoderOptions are the options every frame EncodeBlob writes is made
// with: a frame depends on them and on the raw bytes only.
var encoderOptions = []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithZeroFrames(true)}

// The two pools: binary blobs, and text, for which entropy coding is
// also tried on blocks in which the fastest level finds no repeat (see
// looksLikeText).
var (
	binaryEncoders = &encoderPool{opts: encoderOptions}
	textEncoders   = &encoderPool{opts: append(slices.Clone(encoderOptions), zstd.WithAllLitEntropyCompression(true))}
)

// encHandle is what a pool holds: the garbage collector may drop a
// handle, never the encoder.
type encHandle struct {
	e    *zstd.Encoder
	from *encoderPool
}

// get returns an encoder for the caller's sole use until put, waiting
// while GOMAXPROCS are in use.
func (p *encoderPool) get() *encHandle {
	encoderSlots <- struct{}{}
	if h, ok := p.pool.Get().(*encHandle); ok {
		return h
	}
	p.mu.Lock()
	var e *zstd.Encoder
	if n := len(p.spare); n > 0 {
		e = p.spare[n-1]
		p.spare = p.spare[:n-1]
	}
	p.mu.Unlock()
	if e == nil {
		var err error
		if e, err = zstd.NewWriter(nil, p.opts...); err != nil {
			panic(err)
		}
	}
	h := &encHandle{e: e, from: p}
	runtime.AddCleanup(h, func(e *zstd.Encoder) {
		p.mu.Lock()
		// New encoders can be made while dropped ones wait for their
		// cleanup: keep at most GOMAXPROCS spares, let the rest go.
		if len(p.spare) < cap(encoderSlots) {
			p.spare = append(p.spare, e)
		}
		p.mu.Unlock()
	}, e)
	return h
}

// put gives h back to its pool.
func (h *encHandle) put() {
	h.from.pool.Put(h)
	<-encoderSlots
}

// textSample is how much of a blob looksLikeText reads.
const textSample = 4 << 10

// looksLikeText reports whether raw is at least 1 KiB and its first
// textSample bytes take at most 192 of the 256 byte values. Text does
// (ASCII, UTF-8, base64: 65), random or already compressed bytes do not
// (a sample of 1 KiB of them takes about 250). zstd's fastest level
// stores a block in which it finds no repeat of four bytes or more raw,
// and for random bytes that is right: trying entropy coding on them
// would cost a large commit of incompressible data half its throughput
// for nothing. For text with no repeats, such as base64 (an image or a
// file inside a JSON state), entropy coding stores it in about three
// quarters of its size, where it was stored whole. Below 1 KiB (a
// tree's nodes, short values) the gain is small and the second pool of
// encoders cost a small commit twice its CPU: such blobs take the
// binary pool.
func looksLikeText(raw []byte) bool {
	if len(raw) < 1024 {
		return false
	}
	var seen [256]bool
	n := 0
	for _, c := range raw[:min(len(raw), textSample)] {
		if !seen[c] {
			seen[c] = true
			if n++; n > 192 {
				return false
			}
		}
	}
	return true
}

// maxWindow bounds the window a stored frame may declare. Frames written
// by EncodeBlob declare at most the encoder's default window (or their
// content size, when smaller).
const maxWindow = 8 << 20

// decodeZstd decodes one zstd frame that must hold exactly rawLen bytes,
// allocating in proportion to rawLen rather than to what the frame
// claims, so a small bomb cannot make a reader allocate without bound.
func decodeZstd(frame []byte, rawLen int) ([]byte, error) {
	var h zstd.Header
	if err := h.Decode(frame); err != nil {
		return nil, err
	}
	if h.HasFCS && h.FrameContentSize != uint64(rawLen) {
		return nil, fmt.Errorf("frame holds %d bytes, index says %d", h.FrameContentSize, rawLen)
	}
	if h.WindowSize > maxWindow {
		return nil, fmt.Errorf("frame window of %d bytes exceeds %d", h.WindowSize, maxWindow)
	}
	d := streamDecoders.Get().(*zstd.Decoder)
	defer streamDecoders.Put(d)
	if err := d.Reset(bytes.NewReader(frame)); err != nil {
		return nil, err
	}
	defer d.Reset(nil)
	raw := make([]byte, rawLen)
	if _, err := io.ReadFull(d, raw); err != nil {
		return nil, err
	}
	// The frame must end exactly here.
	var one [1]byte
	if n, err := d.Read(one[:]); n != 0 || !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("frame holds more than the %d bytes the index says", rawLen)
	}
	return raw, nil
}

// EncodeBlob appends the stored form of raw to dst: a codec byte, then
// either a zstd frame (when that is smaller) or raw itself. It is safe
// for concurrent use; the frame depends only on raw.
func EncodeBlob(dst, raw []byte) []byte {
	if len(raw) >= minCompress {
		p := binaryEncoders
		if looksLikeText(raw) {
			p = textEncoders
		}
		enc := p.get()
		start := len(dst)
		dst = append(dst, CodecZstd)
		dst = enc.e.EncodeAll(raw, dst)
		enc.put()
		if len(dst)-start-1 < len(raw) {
			return dst
		}
		dst = dst[:start]
	}
	dst = append(dst, CodecRaw)
	return append(dst, raw...)
}

// DecodeBlob returns the raw bytes of a stored blob, checking that they
// are rawLen bytes long (at most MaxBlobSize) and hash to id. what names
// the blob in errors.
func DecodeBlob(stored []byte, id cas.ID, rawLen int, what string) ([]byte, error) {
	if len(stored) == 0 {
		return nil, fmt.Errorf("%w: %s: empty blob", cas.ErrCorrupt, what)
	}
	if rawLen < 0 || rawLen > MaxBlobSize {
		return nil, fmt.Errorf("%w: %s: size %d out of range", cas.ErrCorrupt, what, rawLen)
	}
	var raw []byte
	switch stored[0] {
	case CodecRaw:
		raw = stored[1:]
	case CodecZstd:
		var err error
		if raw, err = decodeZstd(stored[1:], rawLen); err != nil {
			return nil, fmt.Errorf("%w: %s: zstd: %v", cas.ErrCorrupt, what, err)
		}
	default:
		return nil, fmt.Errorf("%w: %s: unknown codec %d", cas.ErrCorrupt, what, stored[0])
	}
	if len(raw) != rawLen {
		return nil, fmt.Errorf("%w: %s: %d bytes, index says %d", cas.ErrCorrupt, what, len(raw), rawLen)
	}
	// Every blob is re-hashed on every read (I1).
	if err := cas.Verify(id, raw, what); err != nil {
		return nil, err
	}
	if stored[0] == CodecRaw {
		raw = bytes.Clone(raw)
	}
	return raw, nil
}
