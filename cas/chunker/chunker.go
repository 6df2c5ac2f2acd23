// Package chunker splits byte streams into content-defined chunks in the
// FastCDC style: a gear rolling hash, cut-point skipping up to Min, and
// normalized chunking with a strict mask before Avg and a loose one after.
//
// Because a boundary depends only on the bytes just before it, an insertion
// in the middle of a large blob changes the chunks around the edit and leaves
// the rest identical, so they deduplicate.
//
// The boundaries are part of the on-disk format: for given Params and data
// they never change. The gear table, the masks and the cut rule below are
// fixed forever; testdata/boundaries.golden pins them.
package chunker

import (
	"errors"
	"fmt"
	"math/bits"
)

// Params bound chunk sizes. Zero values mean the defaults: a zero Avg is
// 16 KiB, a zero Min is Avg/4 and a zero Max is Avg*4, so the zero Params
// is Default.
//
// Every chunk but the last of a blob is at least Min and at most Max bytes;
// on random data the mean chunk size is a little above Avg (1.1 to 1.15×Avg
// when Min = Avg/4).
type Params struct{ Min, Avg, Max int }

// Default is the parameter set cairn uses for large entries:
// Min 4 KiB, Avg 16 KiB, Max 64 KiB.
var Default = Params{Min: 4 << 10, Avg: 16 << 10, Max: 64 << 10}

// Bounds on Params accepted by Validate.
const (
	// MinSize is the smallest Min allowed.
	MinSize = 64
	// MaxSize is the largest Max allowed (16 MiB).
	MaxSize = 16 << 20
)

// resolved returns p with zero fields filled in.
func (p Params) resolved() Params {
	if p.Avg == 0 {
		p.Avg = Default.Avg
	}
	if p.Min == 0 {
		p.Min = p.Avg / 4
	}
	if p.Max == 0 {
		p.Max = p.Avg * 4
	}
	return p
}

// Validate returns an error for nonsensical params: Min below 64, Avg not a
// power of two, Min <= Avg <= Max violated, or Max above 16 MiB. Zero fields
// are filled in as documented on Params before checking.
func (p Params) Validate() error {
	q := p.resolved()
	switch {
	case q.Min < MinSize:
		return fmt.Errorf("validate chunker params: min %d below %d", q.Min, MinSize)
	case q.Avg <= 0 || q.Avg&(q.Avg-1) != 0:
		return fmt.Errorf("validate chunker params: avg %d not a power of two", q.Avg)
	case q.Min > q.Avg || q.Avg > q.Max:
		return fmt.Errorf("validate chunker params: want min <= avg <= max, got %d, %d, %d", q.Min, q.Avg, q.Max)
	case q.Max > MaxSize:
		return fmt.Errorf("validate chunker params: max %d above %d", q.Max, MaxSize)
	}
	return nil
}

// Boundaries returns the chunk end offsets for data, in increasing order; the
// last one is len(data). Empty data gives nil. It panics if p is invalid (see
// Validate).
func (p Params) Boundaries(data []byte) []int {
	if len(data) == 0 {
		return nil
	}
	c := p.mustCutter()
	out := make([]int, 0, len(data)/c.avg+1)
	for off := 0; off < len(data); {
		off += c.cut(data[off:])
		out = append(out, off)
	}
	return out
}

// Split returns the chunks of data as subslices of data (no copy); their
// concatenation is data. Empty data gives nil. It panics if p is invalid
// (see Validate).
func (p Params) Split(data []byte) [][]byte {
	if len(data) == 0 {
		return nil
	}
	c := p.mustCutter()
	out := make([][]byte, 0, len(data)/c.avg+1)
	for len(data) > 0 {
		n := c.cut(data)
		out = append(out, data[:n:n])
		data = data[n:]
	}
	return out
}

// cutter holds resolved, validated params and the two masks.
type cutter struct {
	min, avg, max int
	// maskS is used before avg bytes (harder to match: log2(avg)+2 bits),
	// maskL after (easier: log2(avg)-2 bits). Normalization level 2.
	maskS, maskL uint64
}

var errInvalid = errors.New("chunker: invalid params")

func (p Params) mustCutter() cutter {
	if err := p.Validate(); err != nil {
		panic(fmt.Errorf("%w: %v", errInvalid, err))
	}
	q := p.resolved()
	b := bits.TrailingZeros(uint(q.Avg)) // log2(Avg), Avg is a power of two
	return cutter{
		min: q.Min, avg: q.Avg, max: q.Max,
		maskS: topBits(b + 2),
		maskL: topBits(b - 2),
	}
}

// topBits returns a mask of the n most significant bits of a uint64. The
// gear hash shifts left, so its high bits depend on the most bytes (the
// top bit on the last 64).
func topBits(n int) uint64 { return ^uint64(0) << (64 - n) }

// cut returns the length of the first chunk of data: len(data) if it is at
// most min; otherwise the first position after min where the gear hash of
// the bytes hashed so far matches the mask, capped at max. Hashing starts
// fresh (fp = 0) at offset min. The result depends only on data[:max], which
// is what lets the streaming Reader agree with Split.
func (c *cutter) cut(data []byte) int {
	n := len(data)
	if n <= c.min {
		return n
	}
	if n > c.max {
		n = c.max
	}
	normal := min(c.avg, n)
	var fp uint64
	maskS, maskL := c.maskS, c.maskL
	for i, b := range data[c.min:normal] {
		fp = fp<<1 + gear[b]
		if fp&maskS == 0 {
			return c.min + i + 1
		}
	}
	for i, b := range data[normal:n] {
		fp = fp<<1 + gear[b]
		if fp&maskL == 0 {
			return normal + i + 1
		}
	}
	return n
}
