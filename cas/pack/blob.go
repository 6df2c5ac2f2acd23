package pack

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
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

// encoders holds the zstd encoders of EncodeBlob, each used by one
// goroutine at a time, at most GOMAXPROCS at once. A goroutine gets the
// encoder last put back on its own P (a sync.Pool), whose tables are
// still in that core's cache: the zstd package's own encoder hands its
// per-core slots out in turn, and on 16 KiB chunks the cache misses
// cost a large commit about a tenth of its CPU time. The pool drops
// what sat idle through two garbage collections; making an encoder
// costs ~0.3 ms and 600 KB, so a dropped one is not lost but kept in
// spare (by a cleanup on its handle, up to GOMAXPROCS of them) for the
// next that is needed.
var encoders = struct {
	slots chan struct{} // a token for each encoder in use
	pool  sync.Pool     // of *encHandle
	mu    sync.Mutex
	spare []*zstd.Encoder
}{slots: make(chan struct{}, runtime.GOMAXPROCS(0))}

// encHandle is what the pool holds: the garbage collector may drop a
// handle, never the encoder.
type encHandle struct{ e *zstd.Encoder }

// getEncoder returns an encoder for the caller's sole use until
// putEncoder, waiting while GOMAXPROCS are in use.
func getEncoder() *encHandle {
	encoders.slots <- struct{}{}
	if h, ok := encoders.pool.Get().(*encHandle); ok {
		return h
	}
	encoders.mu.Lock()
	var e *zstd.Encoder
	if n := len(encoders.spare); n > 0 {
		e = encoders.spare[n-1]
		encoders.spare = encoders.spare[:n-1]
	}
	encoders.mu.Unlock()
	if e == nil {
		// The options are part of what EncodeBlob writes: a frame
		// depends on them and on raw only.
		var err error
		e, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderConcurrency(1), zstd.WithZeroFrames(true))
		if err != nil {
			panic(err)
		}
	}
	h := &encHandle{e: e}
	runtime.AddCleanup(h, func(e *zstd.Encoder) {
		encoders.mu.Lock()
		// New encoders can be made while dropped ones wait for their
		// cleanup: keep at most GOMAXPROCS spares, let the rest go.
		if len(encoders.spare) < cap(encoders.slots) {
			encoders.spare = append(encoders.spare, e)
		}
		encoders.mu.Unlock()
	}, e)
	return h
}

func putEncoder(h *encHandle) {
	encoders.pool.Put(h)
	<-encoders.slots
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
		enc := getEncoder()
		start := len(dst)
		dst = append(dst, CodecZstd)
		dst = enc.e.EncodeAll(raw, dst)
		putEncoder(enc)
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
