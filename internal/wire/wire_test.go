package wire

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

var errBad = errors.New("bad")

func reader(p []byte) *Reader {
	return &Reader{P: p, Fault: func(msg string) error { return errors.Join(errBad, errors.New(msg)) }}
}

func TestReaderFields(t *testing.T) {
	var p []byte
	p = binary.AppendUvarint(p, 300)
	p = binary.AppendVarint(p, -7)
	p = binary.AppendUvarint(p, 3)
	p = append(p, "abcXY"...)
	r := reader(p)
	if v := r.Uvarint(1000); v != 300 {
		t.Fatalf("Uvarint = %d", v)
	}
	if v := r.Varint(); v != -7 {
		t.Fatalf("Varint = %d", v)
	}
	b := r.Bytes(10)
	if string(b) != "abc" || cap(b) != 3 {
		t.Fatalf("Bytes = %q (cap %d): a field must not grow into what follows it", b, cap(b))
	}
	if c := r.Byte(); c != 'X' || r.Err != nil {
		t.Fatalf("Byte = %q, %v", c, r.Err)
	}
	if len(r.P) != 1 {
		t.Fatalf("%d bytes left, want 1", len(r.P))
	}
}

// TestReaderFaults: a bound exceeded, a truncated field or a bad varint
// stops the reader at its first fault, which later reads keep.
func TestReaderFaults(t *testing.T) {
	for _, c := range []struct {
		name string
		p    []byte
		read func(*Reader)
		want string
	}{
		{"over the bound", binary.AppendUvarint(nil, 11), func(r *Reader) { r.Uvarint(10) }, "bad varint"},
		{"no varint", []byte{0x80}, func(r *Reader) { r.Uvarint(10) }, "bad varint"},
		{"no signed varint", nil, func(r *Reader) { r.Varint() }, "bad varint"},
		{"short field", append(binary.AppendUvarint(nil, 5), "ab"...), func(r *Reader) { r.Bytes(10) }, "truncated"},
		{"field over its bound", append(binary.AppendUvarint(nil, 5), "abcde"...), func(r *Reader) { r.Bytes(4) }, "bad varint"},
		{"no byte", nil, func(r *Reader) { r.Byte() }, "truncated"},
	} {
		r := reader(c.p)
		c.read(r)
		if !errors.Is(r.Err, errBad) || !strings.Contains(r.Err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, r.Err, c.want)
			continue
		}
		first := r.Err
		r.Fail("later")
		if r.Uvarint(1<<62) != 0 || r.Take(0) != nil || r.Byte() != 0 || r.Err != first {
			t.Errorf("%s: reads after the fault changed the reader: %v", c.name, r.Err)
		}
	}
}
