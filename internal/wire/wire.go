// Package wire reads the fields of cairn's binary encodings: step
// manifests, tree nodes and the local cache files. Every decoder of bytes
// that came from a store or a disk reads through a Reader, so each field
// is bounded the same way and a malformed input stops the decoder at its
// first fault, with one error that says what was being read.
package wire

import (
	"encoding/binary"
	"fmt"
)

// Reader decodes fields from the front of P. The first fault is kept in
// Err, made by Fault; after it every read returns a zero value, so a
// decoder may read a whole record and check Err once.
type Reader struct {
	P   []byte
	Err error
	// Fault turns a description of a fault ("truncated", "bad varint")
	// into the error the decoder's callers expect, naming what was read.
	Fault func(msg string) error
}

// Fail records a fault, formatted as fmt.Sprintf does, unless one was
// recorded already.
func (r *Reader) Fail(format string, a ...any) {
	if r.Err == nil {
		r.Err = r.Fault(fmt.Sprintf(format, a...))
	}
}

// Uvarint reads an unsigned varint of at most max.
func (r *Reader) Uvarint(max uint64) uint64 {
	if r.Err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.P)
	if n <= 0 || v > max {
		r.Fail("bad varint")
		return 0
	}
	r.P = r.P[n:]
	return v
}

// Varint reads a signed varint.
func (r *Reader) Varint() int64 {
	if r.Err != nil {
		return 0
	}
	v, n := binary.Varint(r.P)
	if n <= 0 {
		r.Fail("bad varint")
		return 0
	}
	r.P = r.P[n:]
	return v
}

// Take reads n bytes. The slice shares P's array but cannot grow into
// the bytes after it.
func (r *Reader) Take(n uint64) []byte {
	if r.Err != nil {
		return nil
	}
	if uint64(len(r.P)) < n {
		r.Fail("truncated")
		return nil
	}
	b := r.P[:n:n]
	r.P = r.P[n:]
	return b
}

// Bytes reads a length-prefixed field of at most max bytes.
func (r *Reader) Bytes(max uint64) []byte {
	n := r.Uvarint(max)
	return r.Take(n)
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if b := r.Take(1); b != nil {
		return b[0]
	}
	return 0
}
