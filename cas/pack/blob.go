package pack

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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
	// encoders holds zstd encoders for EncodeBlob, each used by one
	// goroutine at a time. A sync.Pool hands a goroutine the encoder last
	// put back on its own core, whose tables are still in that core's
	// cache: one shared encoder with a slot per core hands them out in
	// turn, and on 16 KiB chunks the cache misses cost a quarter of the
	// encoding time.
	encoders = sync.Pool{New: func() any {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderConcurrency(1), zstd.WithZeroFrames(true))
		if err != nil {
			panic(err)
		}
		return e
	}}
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
		enc := encoders.Get().(*zstd.Encoder)
		start := len(dst)
		dst = append(dst, CodecZstd)
		dst = enc.EncodeAll(raw, dst)
		encoders.Put(enc)
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
